"""`--sweep`: a grid of method settings as named variants on one leaderboard, each cell
with n scored / n expected, its bootstrap interval and its paired comparison with
RAL-Writer at the paper's settings (`cell_intervals`)."""

from __future__ import annotations

import json
from pathlib import Path

import duckdb
import pytest
from conftest import copy_imported_longinoutbench

from lilo.flows.cli import main
from lilo.tasks.config_loading import load_settings
from lilo.tasks.sweep import SweepError, method_variants, parse_sweep, sweep_points

# The methods embed through the loopback server: what this module checks no vector decides.
pytestmark = pytest.mark.usefixtures("loopback_embeddings")


def test_parse_and_points() -> None:
    assert parse_sweep("generate.ral.k=4, 8,12") == ("generate.ral.k", [4, 8, 12])
    assert parse_sweep("generate.compressor=extractive") == (
        "generate.compressor",
        ["extractive"],
    )
    with pytest.raises(SweepError, match="SETTING=V1,V2"):
        parse_sweep("generate.ral.k")
    grid = sweep_points({"a": [1, 2], "b": [0.1, 0.3]})
    assert grid == [
        (("a", 1), ("b", 0.1)),
        (("a", 1), ("b", 0.3)),
        (("a", 2), ("b", 0.1)),
        (("a", 2), ("b", 0.3)),
    ]
    assert sweep_points({}) == [()]


def test_variants_of_a_grid_and_a_sweep_the_labels_cannot_tell_apart() -> None:
    settings = load_settings(
        None,
        {
            "generate.methods": ["agentwrite", "ral_writer"],
            "generate.sweep": {"generate.ral.a": [20, 60], "generate.ral.b": [0.1, 0.3]},
        },
    )
    labels = [spec.variant for _, _, spec in method_variants(settings)]
    # agentwrite is untouched by the sweep: once.
    assert labels == [
        "agentwrite",
        "ral_writer[a=20,b=0.1]",
        "ral_writer[a=20]",
        "ral_writer[b=0.1]",
        "ral_writer",
    ]
    blind = load_settings(None, {"generate.sweep": {"generate.ral.chunk_words": [512, 1024]}})
    with pytest.raises(SweepError, match="same leaderboard label 'ral_writer'"):
        method_variants(blind)


@pytest.fixture(scope="module")
def swept(tmp_path_factory, imported_longinoutbench) -> Path:
    """The imported benchmark run with a grid of RAL-Writer's a and b."""
    data = copy_imported_longinoutbench(imported_longinoutbench, tmp_path_factory.mktemp("sweep"))
    args = ["run", "--dataset", "longinoutbench", "--samples", "2", "--data-dir", str(data)]
    args += ["--target-words", "1000", "--methods", "agentwrite,ral_writer"]
    args += ["--sweep", "generate.ral.a=20,60", "--sweep", "generate.ral.b=0.1,0.3"]
    assert main(args) == 0
    return data


def _sql(data: Path, query: str) -> list[tuple]:
    con = duckdb.connect(str(data / "published" / "lilo.duckdb"), read_only=True)
    try:
        return con.execute(query).fetchall()
    finally:
        con.close()


def test_a_grid_on_one_leaderboard_with_intervals_and_paired_tests(swept: Path) -> None:
    board = _sql(swept, "SELECT variant, scored, expected FROM leaderboard ORDER BY variant")
    assert board == [
        ("agentwrite", 2, 2),
        ("ral_writer", 2, 2),
        ("ral_writer[a=20,b=0.1]", 2, 2),
        ("ral_writer[a=20]", 2, 2),
        ("ral_writer[b=0.1]", 2, 2),
    ]
    args = _sql(
        swept,
        "SELECT DISTINCT variant, method_args->>'a', method_args->>'b' FROM fct_generations "
        "WHERE variant = 'ral_writer[a=20,b=0.1]'",
    )
    assert args == [("ral_writer[a=20,b=0.1]", "20.0", "0.1")]
    cells = _sql(
        swept,
        "SELECT variant, n, mean, ci_low, ci_high, reference, difference_low, difference_high, "
        "within_noise "
        "FROM cell_intervals WHERE score = 'consistency' AND target_words = 1000",
    )
    assert len(cells) == 5
    for variant, n, mean, low, high, reference, d_low, d_high, noise in cells:
        # two samples: n too small for an interval, and no difference outside the noise
        assert n == 2 and mean is not None and low is None and high is None
        if variant == "ral_writer":
            assert reference is None
        else:
            assert reference == "ral_writer" and noise and d_low is None and d_high is None


def test_a_sweep_the_leaderboard_cannot_show_is_refused_before_the_run(swept, capsys) -> None:
    args = ["run", "--dataset", "longinoutbench", "--data-dir", str(swept)]
    args += ["--sweep", "generate.ral.chunk_words=512,1024", "--methods", "ral_writer"]
    assert main(args) == 2
    assert "same leaderboard label 'ral_writer'" in capsys.readouterr().err


def test_judge_repeats_are_cached_each_under_its_own_key(swept: Path) -> None:
    args = ["run", "--dataset", "longinoutbench", "--samples", "2", "--data-dir", str(swept)]
    args += ["--target-words", "1000", "--methods", "agentwrite", "--judge-repeats", "2"]
    assert main(args) == 0
    assert main(args) == 0
    made = _sql(
        swept,
        "SELECT r.started_at, count(*) FILTER (WHERE NOT c.cached), "
        "count(*) FILTER (WHERE c.cached) "
        "FROM fct_llm_calls AS c JOIN runs AS r USING (run_id) WHERE c.stage = 'judge_repeats' "
        "GROUP BY ALL ORDER BY 1",
    )
    # The first run asks the judge again (new keys: nothing cached); the second makes none.
    assert len(made) == 1 and made[0][1] > 0
    repeats = _sql(swept, "SELECT DISTINCT repeat FROM fct_judge_repeats ORDER BY 1")
    assert repeats == [(1,), (2,)]
    spread = _sql(
        swept,
        "SELECT variant, score, answers, judge_spread, n FROM judge_spread "
        "WHERE variant = 'agentwrite' ORDER BY score",
    )
    # The offline judge answers the same prompt the same way: its own spread is zero.
    assert spread == [
        ("agentwrite", "consistency", 3, 0.0, 2),
        ("agentwrite", "quality", 3, 0.0, 2),
    ]


def test_judge_agreement_from_a_reviewed_file(swept: Path, capsys) -> None:
    from lilo.tasks.qa.parse import TIERS
    from lilo.tasks.stats import weighted_kappa

    data = ["--data-dir", str(swept), "--set", "dataset_version=longinoutbench"]
    exported = swept / "grades.jsonl"
    assert main(["review", "grades-export", str(exported), "--n", "6", *data]) == 0
    items = [json.loads(line) for line in exported.read_text().splitlines()]
    assert len(items) == 6 and all(i["human_grade"] is None for i in items)
    assert {"question", "gold_answer", "answer", "judge_grade"} <= set(items[0])
    # The reviewer agrees but on the first item, graded one tier away from the judge.
    humans = [i["judge_grade"] for i in items]
    humans[0] = TIERS[TIERS.index(humans[0]) + (1 if humans[0] < 1 else -1)]
    lines = [json.dumps({**i, "human_grade": h}) for i, h in zip(items, humans, strict=True)]
    lines.append(json.dumps({**items[1], "human_grade": 0.6}))  # off the tiers: skipped
    exported.write_text("\n".join(lines) + "\n")
    capsys.readouterr()
    assert main(["review", "grades-import", str(exported), "--reviewer", "ann", *data]) == 1
    assert "human_grade: Value error, must be one of" in capsys.readouterr().err
    assert main(["review", "agreement", *data]) == 0
    header, row = capsys.readouterr().out.strip().splitlines()
    judge, version, n, exact, kappa = row.split("\t")
    assert (version, n, float(exact)) == ("longinoutbench", "6", round(5 / 6, 4))
    judged = [i["judge_grade"] for i in items]
    assert float(kappa) == round(weighted_kappa(humans, judged, TIERS), 4)
