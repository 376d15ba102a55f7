"""The warehouse on a real DuckDB file: idempotent upserts, versions, publishing."""

from __future__ import annotations

from pathlib import Path

import duckdb
import pytest

from lilo.flows._stage import score_columns
from lilo.tasks.records import Generation, Quarantine, Sample, ScoreRow
from lilo.tasks.scoring import scored_by
from lilo.warehouse import Warehouse
from lilo.warehouse.publishing import publish_warehouse
from lilo.warehouse.results import Expected, materialize_results
from lilo.warehouse.schema import NewerWarehouse

ROOT = Path(__file__).resolve().parent.parent


def test_upsert_is_idempotent_and_update_replaces(tmp_path):
    wh = Warehouse(tmp_path / "w.duckdb", score_columns())
    row = Quarantine("2601.00001", "clean", "too_short", "12 words")
    assert wh.upsert("quarantine", [row, row], ("item_id", "stage"), extra={"run_id": "r1"}) == 1
    assert wh.upsert("quarantine", [row], ("item_id", "stage"), extra={"run_id": "r2"}) == 0
    assert wh.scalar("SELECT run_id FROM quarantine") == "r1"
    moved = Quarantine("2601.00001", "clean", "not_utf8", "main.tex")
    assert (
        wh.upsert("quarantine", [moved], ("item_id", "stage"), update=True, extra={"run_id": "r3"})
        == 0
    )
    assert wh.rows("SELECT reason, run_id FROM quarantine") == [
        {"reason": "not_utf8", "run_id": "r3"}
    ]


def test_clear_quarantine_removes_only_the_given_items_at_the_stage(tmp_path):
    wh = Warehouse(tmp_path / "w.duckdb", score_columns())
    rows = [Quarantine("a", "qa", "llm_error"), Quarantine("b", "qa", "llm_error")]
    rows.append(Quarantine("a", "clean", "too_short"))
    wh.upsert("quarantine", rows, ("item_id", "stage"), extra={"run_id": "r"})
    assert wh.clear_quarantine("qa", []) == 0
    assert wh.clear_quarantine("qa", ["a", "zzz"]) == 1
    assert wh.rows("SELECT item_id, stage FROM quarantine ORDER BY ALL") == [
        {"item_id": "a", "stage": "clean"},
        {"item_id": "b", "stage": "qa"},
    ]


def test_writes_quote_names_and_count_what_the_statement_changed(tmp_path):
    wh = Warehouse(tmp_path / "w.duckdb", score_columns())
    wh.con.execute('CREATE TABLE "odd table" ("order" TEXT PRIMARY KEY, "select" INTEGER)')
    rows = [{"order": "a", "select": 1}, {"order": "b", "select": 2}]
    assert wh.upsert("odd table", rows, ("order",)) == 2
    assert wh.upsert("odd table", [*rows, {"order": "c", "select": 3}], ("order",)) == 1
    changed = [{"order": "a", "select": 9}, {"order": "d", "select": 4}]
    assert wh.upsert("odd table", changed, ("order",), update=True) == 1  # d added, a overwritten
    assert wh.scalar('SELECT "select" FROM "odd table" WHERE "order" = ?', ["a"]) == 9
    assert wh.delete("odd table", "order", ["a", "z"], select=9) == 1
    assert wh.count("odd table") == 3


def test_migrations_apply_once(tmp_path):
    Warehouse(tmp_path / "w.duckdb", score_columns()).close()
    wh = Warehouse(tmp_path / "w.duckdb", score_columns())
    migrations = len(list((ROOT / "warehouse" / "migrations").glob("*.sql")))
    assert wh.scalar("SELECT count(*) FROM schema_migrations") == migrations
    assert {"runs", "dim_papers", "fct_generations", "fct_scores", "res_scores"} <= set(wh.tables())


def test_a_warehouse_migrated_by_a_newer_lilo_is_refused_naming_the_versions(tmp_path):
    path = tmp_path / "w.duckdb"
    known = sorted(p.name for p in (ROOT / "warehouse" / "migrations").glob("*.sql"))
    con = duckdb.connect(str(path))
    con.execute(
        "CREATE TABLE schema_migrations (version VARCHAR PRIMARY KEY, applied_at TIMESTAMP)"
    )
    con.executemany(
        "INSERT INTO schema_migrations VALUES (?, now())",
        [[v] for v in [*known, "099_from_a_newer_lilo.sql"]],
    )
    con.close()
    with pytest.raises(NewerWarehouse) as refused:
        Warehouse(path)
    assert str(refused.value) == (
        f"{path} was migrated by a newer lilo (schema 099_from_a_newer_lilo.sql; this lilo "
        f"knows up to {known[-1]}): open it with that lilo, or upgrade this one"
    )
    con = duckdb.connect(str(path), read_only=True)
    assert [t for (t,) in con.execute("SHOW TABLES").fetchall()] == ["schema_migrations"]
    con.close()


def _seed(wh: Warehouse, value: float) -> None:
    sample = Sample("s1", "v1", ("a", "b", "c"), "GP kernels", "sv", 9000, "command")
    wh.upsert("dim_samples", [sample], ("sample_id",), extra={"run_id": "r"})
    gen = Generation("g1", "s1", "single", {}, 4000, "offline:m", "text", 1)
    wh.upsert(
        "fct_generations",
        [gen],
        ("generation_id",),
        extra={"run_id": "r", "config_hash": "h", "code_version": "c"},
    )
    scores = [
        ScoreRow("g1", "length", value),
        ScoreRow("g1", "consistency", 40.0),
        ScoreRow("g1", "quality", 60.0),
        ScoreRow("g1", "single_pos2", 25.0),
    ]
    wh.upsert("fct_scores", scores, ("generation_id", "score"), update=True, extra={"run_id": "r"})


EXPECTED = Expected(["s1"], ["single"], [4000], "offline:m")


def test_a_generation_counts_as_scored_by_the_scores_the_flow_hands_over(tmp_path):
    wh = Warehouse(tmp_path / "w.duckdb", score_columns())
    _seed(wh, 50.0)
    wh.con.execute("DELETE FROM fct_scores WHERE score = 'quality'")
    materialize_results(wh, "v1", "r1", EXPECTED, scored_by=scored_by(), publish_partial=True)
    assert wh.rows("SELECT n_scored FROM res_cells WHERE version = 1") == [{"n_scored": 0}]
    materialize_results(wh, "v1", "r2", EXPECTED, scored_by=["length", "consistency"])
    assert wh.rows("SELECT n_scored FROM res_cells WHERE version = 2") == [{"n_scored": 1}]


def test_versions_are_immutable_and_only_made_for_new_content(tmp_path):
    wh = Warehouse(tmp_path / "w.duckdb", score_columns())
    _seed(wh, 50.0)
    first = materialize_results(wh, "v1", "r1", EXPECTED, scored_by=scored_by())
    again = materialize_results(wh, "v1", "r2", EXPECTED, scored_by=scored_by())
    assert first is not None and first.created and first.version == 1
    assert again is not None and not again.created and again.version == 1
    _seed(wh, 75.0)
    second = materialize_results(wh, "v1", "r3", EXPECTED, scored_by=scored_by())
    assert second is not None and second.created and second.version == 2
    _seed(wh, 50.0)  # back to version 1's content: a new version, the latest on the board
    third = materialize_results(wh, "v1", "r4", EXPECTED, scored_by=scored_by())
    assert third is not None and third.created and third.version == 3
    assert wh.rows("SELECT s_l FROM leaderboard") == [{"s_l": 50.0}]
    _seed(wh, 75.0)
    assert materialize_results(wh, "v1", "r5", EXPECTED, scored_by=scored_by()).version == 4
    board = wh.rows(
        "SELECT method, target_words, scored, expected, partial, s_l, s_c, s_q FROM leaderboard"
    )
    assert board == [
        {"method": "single", "target_words": 4000, "scored": 1, "expected": 1, "partial": False,
         "s_l": 75.0, "s_c": 40.0, "s_q": 60.0}
    ]  # fmt: skip
    old = wh.rows("SELECT s_l FROM res_leaderboard WHERE version = 1")
    assert old == [{"s_l": 50.0}]
    assert wh.rows("SELECT position, s_single FROM position_curve") == [
        {"position": 2, "s_single": 25.0}
    ]


def test_published_copy_is_readable_while_the_writer_holds_the_file(tmp_path):
    wh = Warehouse(tmp_path / "lilo.duckdb", score_columns())
    _seed(wh, 50.0)
    materialize_results(wh, "v1", "r1", EXPECTED, scored_by=scored_by())
    published = publish_warehouse(wh, tmp_path / "published" / "lilo.duckdb", tmp_path)
    reader = duckdb.connect(str(published), read_only=True)
    assert reader.execute("SELECT s_l FROM leaderboard").fetchall() == [(50.0,)]
    _seed(wh, 75.0)
    materialize_results(wh, "v1", "r2", EXPECTED, scored_by=scored_by())
    # Replaced under an open reader: the reader keeps its snapshot.
    publish_warehouse(wh, published, tmp_path)
    assert reader.execute("SELECT s_l FROM leaderboard").fetchall() == [(50.0,)]
    reader.close()
    fresh = duckdb.connect(str(published), read_only=True)
    assert fresh.execute("SELECT s_l FROM leaderboard").fetchall() == [(75.0,)]
    parquet = sorted((tmp_path / "published" / "results").glob("version=*/res_scores.parquet"))
    assert [p.parent.name for p in parquet] == ["version=0001", "version=0002"]


def test_nested_transactions_are_one(tmp_path):
    wh = Warehouse(tmp_path / "w.duckdb", score_columns())
    first = Quarantine("2601.00001", "clean", "too_short", "")
    second = Quarantine("2601.00002", "clean", "too_short", "")
    try:
        with wh.transaction():
            wh.upsert("quarantine", [first], ("item_id", "stage"), extra={"run_id": "r"})
            wh.upsert("quarantine", [second], ("item_id", "stage"), extra={"run_id": "r"})
            raise RuntimeError("crash between the writes")
    except RuntimeError:
        pass
    assert wh.scalar("SELECT count(*) FROM quarantine") == 0  # neither write survived
    with wh.transaction():
        wh.upsert("quarantine", [first, second], ("item_id", "stage"), extra={"run_id": "r"})
    assert wh.scalar("SELECT count(*) FROM quarantine") == 2


def test_failed_and_missing_summaries_make_a_partial_version(tmp_path):
    """A failed generation is a result: its cell shows 1 scored of 3 expected, the cell of a
    method that produced nothing shows 0 of 3, and the version is partial (docs/design.md §8)."""
    wh = Warehouse(tmp_path / "w.duckdb", score_columns())
    _seed(wh, 50.0)
    failed = Generation("g2", "s2", "single", {}, 4000, "offline:m", "", 0, error="PlanError")
    wh.upsert(
        "fct_generations",
        [failed],
        ("generation_id",),
        extra={"run_id": "r", "config_hash": "h", "code_version": "c"},
    )
    expected = Expected(["s1", "s2", "s3"], ["single", "agentwrite"], [4000], "offline:m")
    result = materialize_results(wh, "v1", "r1", expected, scored_by=scored_by())
    assert result is not None and result.partial
    cells = wh.rows("SELECT method, scored, expected, failed, partial FROM leaderboard")
    assert cells == [
        {"method": "single", "scored": 1, "expected": 3, "failed": 1, "partial": True},
        {"method": "agentwrite", "scored": 0, "expected": 3, "failed": 0, "partial": True},
    ]
    assert wh.scalar("SELECT partial FROM res_versions WHERE version = 1") is True
    assert [r["reason"] for r in wh.rows("SELECT reason FROM failures")] == ["PlanError"]


def test_permutation_view_averages_each_position_over_the_cyclic_orders(tmp_path):
    """Three cyclic orders of one sample: S_single at each reading position is the mean over
    the orders, with the spread across them (docs/design.md §8)."""
    wh = Warehouse(tmp_path / "w.duckdb", score_columns())
    sample = Sample("s1", "v1", ("a", "b", "c"), "GP kernels", "sv", 9000, "command")
    wh.upsert("dim_samples", [sample], ("sample_id",), extra={"run_id": "r"})
    by_order = {0: (80.0, 20.0, 60.0), 1: (70.0, 40.0, 70.0), 2: (90.0, 30.0, 50.0)}
    for rotation, values in by_order.items():
        gen = Generation(
            f"g{rotation}", "s1", "single", {}, 4000, "offline:m", "t", 1, rotation=rotation
        )
        wh.upsert(
            "fct_generations",
            [gen],
            ("generation_id",),
            extra={"run_id": "r", "config_hash": "h", "code_version": "c"},
        )
        rows = [ScoreRow(gen.generation_id, f"single_pos{i}", v) for i, v in enumerate(values, 1)]
        wh.upsert("fct_scores", rows, ("generation_id", "score"), extra={"run_id": "r"})
    materialize_results(wh, "v1", "r1", EXPECTED, scored_by=scored_by())
    curve = wh.rows("SELECT position, s_single, spread, orders FROM position_permutation")
    assert curve == [
        {"position": 1, "s_single": 80.0, "spread": 8.16, "orders": 3},
        {"position": 2, "s_single": 30.0, "spread": 8.16, "orders": 3},
        {"position": 3, "s_single": 60.0, "spread": 8.16, "orders": 3},
    ]


def test_a_version_holds_what_its_run_asked_for_and_nothing_else(tmp_path):
    """Summaries of three samples, two methods, two lengths are all scored. A run that
    asks for two samples of one method at 8k makes a version of that one cell over those
    two samples: the 4k cells and the other method (scored, current) are not in it, its
    scope says what it holds, and what the leaderboard no longer shows is said."""
    from lilo.warehouse.queries.results import read_scope, scope_changes

    wh = Warehouse(tmp_path / "w.duckdb", score_columns())
    extra = {"run_id": "r", "config_hash": "h", "code_version": "c"}
    for i in (1, 2, 3):
        sample = Sample(f"s{i}", "v1", ("a", "b", "c"), "GP kernels", "sv", 9000, "command")
        wh.upsert("dim_samples", [sample], ("sample_id",), extra={"run_id": "r"})
        for method in ("single", "agentwrite"):
            for words in (4000, 8000):
                gid = f"{method}-{words}-s{i}"
                gen = Generation(gid, f"s{i}", method, {}, words, "offline:m", "t", 1)
                wh.upsert("fct_generations", [gen], ("generation_id",), extra=extra)
                scores = [ScoreRow(gid, s, 10.0 * i) for s in ("length", "consistency", "quality")]
                wh.upsert("fct_scores", scores, ("generation_id", "score"), extra={"run_id": "r"})
    wide = Expected(["s1", "s2", "s3"], ["single", "agentwrite"], [4000, 8000], "offline:m")
    assert materialize_results(wh, "v1", "r1", wide, scored_by=scored_by()).version == 1
    narrow = Expected(["s1", "s2"], ["single"], [8000], "offline:m", judge="offline:j")
    second = materialize_results(wh, "v1", "r2", narrow, scored_by=scored_by())
    assert second is not None and second.created and second.version == 2
    assert wh.rows("SELECT method, target_words, scored, expected, s_c FROM leaderboard") == [
        {"method": "single", "target_words": 8000, "scored": 2, "expected": 2, "s_c": 15.0}
    ]
    held = wh.rows("SELECT DISTINCT sample_id, method, target_words FROM res_scores "
                   "WHERE version = 2 ORDER BY ALL")  # fmt: skip
    assert held == [
        {"sample_id": "s1", "method": "single", "target_words": 8000},
        {"sample_id": "s2", "method": "single", "target_words": 8000},
    ]
    # version 1 is as it was: every cell over the three samples
    assert wh.rows("SELECT DISTINCT expected, s_c FROM res_leaderboard WHERE version = 1") == [
        {"expected": 3, "s_c": 20.0}
    ]
    scope = read_scope(wh, 2)
    assert scope is not None and scope.line() == (
        "Scope: 2 of 3 samples of dataset v1; methods single; lengths 8k; "
        "backbone offline:m; judge offline:j"
    )
    assert read_scope(wh, 1) is not None and read_scope(wh, 1).samples == ["s1", "s2", "s3"]
    assert scope_changes(wh, 1, 2) == [
        "version 1's cells outside this run's scope (agentwrite at 4k, 8k; single at 4k) are "
        "not in version 2: `lilo leaderboard --result-version 1` shows them",
        "version 2's cells average 2 samples where version 1's averaged 3",
    ]
    assert scope_changes(wh, 2, 2) == []
    # The same scope asked again, its methods in another order: the same version.
    again = materialize_results(wh, "v1", "r3", wide, scored_by=scored_by())
    assert again is not None and again.created and again.version == 3
    other_order = Expected(["s1", "s2", "s3"], ["agentwrite", "single"], [8000, 4000], "offline:m")
    assert not materialize_results(wh, "v1", "r4", other_order, scored_by=scored_by()).created
