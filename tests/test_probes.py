"""The Lost-in-the-Middle probes end to end: a small clone in the authors' layout (written
here: lilo-made KV sets, synthetic questions and passages, templates of lilo's own), its
import (once), `lilo probe kv|mdqa` through real Prefect flows and the offline engine, the
views, and the offline engine's reading of probe prompts."""

from __future__ import annotations

import dataclasses
import gzip
import json
import os
import uuid
from pathlib import Path

import duckdb
import pandas as pd
import pytest

from lilo.flows.cli import main
from lilo.tasks.config import OfflineSettings, Settings
from lilo.tasks.llm.offline import reply
from lilo.tasks.llm.offline.probe_kv import NOT_FOUND
from lilo.tasks.llm.offline.probe_qa import NO_ANSWER
from lilo.tasks.probe_records import ProbeUnit
from lilo.tasks.probes import (
    CLONE_PROMPTS,
    LILO_PROMPTS,
    ProbePrompts,
    build_prompt,
    kv_items,
    mdqa_from_warehouse,
    read_clone,
)
from lilo.tasks.probes.published import beside_published, published_litm
from lilo.tasks.records import PaperText, QAPair
from lilo.warehouse import Warehouse

NAMES = ("Alder", "Birch", "Cedar", "Daisy", "Elm", "Fir", "Gorse", "Hazel", "Iris", "Juniper",
         "Kale", "Larch", "Maple", "Nettle", "Oak", "Poplar", "Quince", "Rowan", "Sage", "Teak",
         "Umber", "Vetch", "Willow", "Yarrow")  # fmt: skip


def _write_gz(path: Path, rows: list[object]) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    with gzip.open(path, "wt", encoding="utf-8") as f:
        for row in rows:
            f.write((row if isinstance(row, str) else json.dumps(row)) + "\n")


def _passage(i: int) -> dict[str, object]:
    name = NAMES[i]
    text = (
        f"The {name} bridge first opened to traffic in {1901 + i}. It crosses the river near "
        f"the old mill of {name}ford, and carries two lanes. Engineers repaired its deck."
    )
    return {"title": f"{name} bridge", "text": text, "hasanswer": True, "isgold": True}


def _question(i: int) -> dict[str, object]:
    return {"question": f"when did the {NAMES[i].lower()} bridge open", "answers": [str(1901 + i)]}


def make_clone(root: Path) -> Path:
    """A clone holding 75-key KV sets (one bad line), the oracle file and the 10-document
    files (gold at 0, 4, 9: the same examples with the gold passage moved)."""
    kv = [
        {"ordered_kv_records": [list(p) for p in i.context], "key": i.question,
         "value": i.answers[0]}
        for i in kv_items(75, 4, seed=7)
    ]  # fmt: skip
    bad = dict(kv[0], key="not-a-key-of-these-records")
    _write_gz(root / "kv_retrieval_data" / "kv-retrieval-75_keys.jsonl.gz", [*kv, bad])
    oracle = [{**_question(i), "ctxs": [_passage(i)]} for i in range(len(NAMES))]
    _write_gz(root / "qa_data" / "nq-open-oracle.jsonl.gz", [*oracle, "{not json"])
    for gold_at in (0, 4, 9):
        rows = []
        for i in range(3):
            distractors = [
                {**_passage(j), "hasanswer": False, "isgold": False}
                for j in range(len(NAMES))
                if j != i
            ][:9]
            distractors.insert(gold_at, _passage(i))
            rows.append({**_question(i), "ctxs": distractors})
        name = f"nq-open-10_total_documents_gold_at_{gold_at}.jsonl.gz"
        _write_gz(root / "qa_data" / "10_total_documents" / name, rows)
    prompts = root / "src" / "lost_in_the_middle" / "prompts"
    prompts.mkdir(parents=True)
    for name, filename in CLONE_PROMPTS.items():  # lilo's wording, the clone's layout
        (prompts / filename).write_text("From the clone. " + LILO_PROMPTS[name] + "\n")
    return root


def _lilo(*args: str) -> int:
    return main(list(args))


def _published(data: Path, sql: str) -> list[tuple]:
    con = duckdb.connect(str(data / "published" / "lilo.duckdb"), read_only=True)
    try:
        return con.execute(sql).fetchall()
    finally:
        con.close()


def _published_view(data: Path, name: str) -> pd.DataFrame:
    con = duckdb.connect(str(data / "published" / "lilo.duckdb"), read_only=True)
    try:
        return con.execute(f"SELECT * FROM {name}").df()
    finally:
        con.close()


def test_import_reads_what_the_clone_holds_once(tmp_path, capsys, prefect_harness):
    clone, data = make_clone(tmp_path / "clone"), tmp_path / "data"
    assert _lilo("import", "lost-in-the-middle", str(clone), "--data-dir", str(data)) == 0
    out = capsys.readouterr().out
    assert "kv_retrieval_data/kv-retrieval-75_keys.jsonl.gz: 4 items" in out
    assert f"qa_data/nq-open-oracle.jsonl.gz: {len(NAMES)} items" in out
    assert "absent in this clone (fine): kv_retrieval_data/kv-retrieval-140_keys" in out
    assert "kv-retrieval-75_keys.jsonl.gz:5: the pair of key not-a-key-of-these-records" in out
    assert "nq-open-oracle.jsonl.gz:25: " in out
    counts = dict(_published(data, "SELECT probe_set, count(*) FROM dim_probe_items GROUP BY 1"))
    assert counts == {"liu/kv-75": 4, "liu/nq-oracle": len(NAMES), "liu/mdqa-10": 3}
    gold = _published(
        data, "SELECT gold->>'title', json_array_length(context) FROM dim_probe_items "
        "WHERE item_id = 'liu/mdqa-10/1'"
    )  # fmt: skip
    assert gold == [("Birch bridge", 9)]  # one item from the three gold_at files
    assert _published(data, "SELECT count(*) FROM quarantine WHERE stage = 'import'") == [(2,)]
    assert _lilo("import", "lost-in-the-middle", str(clone), "--data-dir", str(data)) == 0
    assert "rows added: 0: nothing new" in capsys.readouterr().out
    assert _lilo("import", "lost-in-the-middle", str(tmp_path), "--data-dir", str(data)) == 2
    assert "holds neither kv_retrieval_data/ nor qa_data/" in capsys.readouterr().err

    # The imported data and templates are what the probes use.
    code = _lilo("probe", "mdqa", "--docs", "10", "--examples", "3", "--data-dir", str(data))
    assert code == 0
    rows = _published(
        data, "SELECT variant, setting, position, accuracy, n, prompts FROM probe_curve "
        "ORDER BY setting, position"
    )  # fmt: skip
    assert [(r[1], r[2]) for r in rows] == [
        ("closed_book", None), ("oracle", None), ("position", 0), ("position", 4),
        ("position", 9),
    ]  # fmt: skip
    assert {r[0] for r in rows} == {"published"} and {r[5] for r in rows} == {"lost-in-the-middle"}
    by_setting = {(r[1], r[2]): r[3] for r in rows}
    assert by_setting[("closed_book", None)] == 0.0  # the engine knows nothing by itself
    assert by_setting[("oracle", None)] == 1.0
    page = (data / "published" / "probes" / "version=0001" / "report.html").read_text()
    assert '<img id="probe-curves"' in page and 'id="summary"' in page and "closed_book" in page
    # Liu et al.'s published accuracies, lilo's beside those of the same 10-document cells.
    assert '<table id="published">' in page and "Appendix G, Table 5" in page
    published = beside_published(_published_view(data, "probe_curve"))
    ten = published[(published["documents"] == 10) & (published["model"] == "GPT-3.5-Turbo")]
    assert list(ten["gold position"]) == [1, 5, 10] and list(ten["published"]) == [
        0.768,
        0.612,
        0.624,
    ]
    assert list(ten["lilo"]) == [by_setting[("position", p)] for p in (0, 4, 9)]
    request = _published(data, "SELECT count(*) FROM fct_llm_calls WHERE purpose = 'probe_mdqa'")
    assert request == [(3 * 3 + 3 + 3,)]

    # From the oracle file's passages: lilo's construction, named with every result.
    code = _lilo(
        "probe", "mdqa", "--docs", "6", "--examples", "5", "--source", "nq-oracle",
        "--distractors", "random", "--positions", "0,2,5", "--data-dir", str(data),
    )  # fmt: skip
    assert code == 0
    variants = _published(
        data, "SELECT DISTINCT variant, size FROM probe_curve WHERE size = 6 ORDER BY 1"
    )  # fmt: skip
    assert variants == [("lilo[nq-oracle,random]", 6)]
    summary = _published(
        data, "SELECT best_position, worst_position, u_depth, oracle FROM probe_summary "
        "WHERE size = 6"
    )  # fmt: skip
    assert len(summary) == 1 and summary[0][3] == 1.0
    assert _published(data, "SELECT max(version) FROM res_probe_versions") == [(2,)]


def test_clone_files_that_link_out_of_it_are_one_problem_each_and_not_read(tmp_path):
    clone = make_clone(tmp_path / "clone")
    private = tmp_path / "private"
    private.mkdir()
    data = clone / "kv_retrieval_data" / "kv-retrieval-75_keys.jsonl.gz"
    prompt = clone / "src" / "lost_in_the_middle" / "prompts" / CLONE_PROMPTS["qa"]
    for path in (data, prompt):
        path.rename(private / path.name)
        path.symlink_to(private / path.name)
    cloned = read_clone(clone)
    lines = {q.item_id: (q.reason, q.detail) for q in cloned.problems if "link" in q.detail}
    kv, qa = (p.relative_to(clone).as_posix() for p in (data, prompt))
    assert lines == {
        f"lost-in-the-middle/{kv}": (
            "link_outside",
            f"{kv}: a link out of clone/ (to {private / data.name})",
        ),
        f"lost-in-the-middle/{qa}": (
            "probe_prompt",
            f"{qa}: a link out of clone/ (to {private / prompt.name}); lilo's own qa prompt "
            "stands in",
        ),
    }
    assert not any(i.probe_set == "liu/kv-75" for i in cloned.items) and "qa" not in cloned.prompts
    assert {i.probe_set for i in cloned.items} == {"liu/nq-oracle", "liu/mdqa-10"}


def test_clone_files_that_are_hard_links_are_one_problem_each_unless_allowed(tmp_path):
    clone = make_clone(tmp_path / "clone")
    data = clone / "kv_retrieval_data" / "kv-retrieval-75_keys.jsonl.gz"
    prompt = clone / "src" / "lost_in_the_middle" / "prompts" / CLONE_PROMPTS["qa"]
    for path in (data, prompt):
        os.link(path, tmp_path / path.name)
    cloned = read_clone(clone)
    lines = {q.item_id: (q.reason, q.detail) for q in cloned.problems if "hard" in q.detail}
    kv, qa = (p.relative_to(clone).as_posix() for p in (data, prompt))
    why = "a hard link (2 names, any file of the disk may be one)"
    assert lines == {
        f"lost-in-the-middle/{kv}": ("hard_link", f"{kv}: {why}"),
        f"lost-in-the-middle/{qa}": (
            "probe_prompt",
            f"{qa}: {why}; lilo's own qa prompt stands in",
        ),
    }
    assert not any(i.probe_set == "liu/kv-75" for i in cloned.items) and "qa" not in cloned.prompts
    allowed = read_clone(clone, hard_links=True)
    assert "qa" in allowed.prompts and any(i.probe_set == "liu/kv-75" for i in allowed.items)


def test_a_deeply_nested_line_is_one_problem_and_the_rest_of_its_file_reads(tmp_path):
    clone = make_clone(tmp_path / "clone")
    data = clone / "kv_retrieval_data" / "kv-retrieval-75_keys.jsonl.gz"
    with gzip.open(data, "rt", encoding="utf-8") as lines:
        rows = lines.read().splitlines()
    _write_gz(data, ["[" * 200_000, *rows])
    cloned = read_clone(clone)
    rel = data.relative_to(clone).as_posix()
    assert [q.detail for q in cloned.problems if q.item_id.endswith(":1")] == [
        f"{rel}:1: JSON nested too deeply"
    ]
    assert cloned.files[rel] == len(rows) - 1  # the fixture's own bad line aside


def test_a_clone_prompt_with_more_than_its_placeholders_is_refused(tmp_path):
    """The prompts are Python format strings: a field that reads an attribute or pads
    without bound is refused at import, and lilo's own prompt stands in."""
    clone = make_clone(tmp_path / "clone")
    prompts = clone / "src" / "lost_in_the_middle" / "prompts"
    kv, qa = prompts / CLONE_PROMPTS["kv_retrieval"], prompts / CLONE_PROMPTS["qa"]
    kv.write_text(kv.read_text() + "{key.__class__.__mro__}")
    qa.write_text(qa.read_text() + "{question:>999999999}")
    cloned = read_clone(clone)
    assert sorted(q.detail for q in cloned.problems if q.reason == "probe_prompt") == [
        "src/lost_in_the_middle/prompts/kv_retrieval.prompt: uses {key.__class__.__mro__}, a "
        "prompt may use only {formatted_kv_records}, {key}; lilo's own stands in",
        "src/lost_in_the_middle/prompts/qa.prompt: uses {question:>999999999}, a prompt may "
        "use only {search_results}, {question}; lilo's own stands in",
    ]
    assert "kv" not in cloned.prompts and "qa" not in cloned.prompts


def test_zero_padded_names_of_one_size_are_one_problem_and_read_once(tmp_path):
    """`kv-retrieval-075_` and `-0075_` name the key count of `kv-retrieval-75_`: one problem
    line for both, and only `kv-retrieval-75_` is read (so also for the QA files' names)."""
    clone = make_clone(tmp_path / "clone")
    folder = clone / "kv_retrieval_data"
    for padded in ("075", "0075"):
        (folder / f"kv-retrieval-{padded}_keys.jsonl.gz").write_bytes(
            (folder / "kv-retrieval-75_keys.jsonl.gz").read_bytes()
        )
    qa = clone / "qa_data" / "10_total_documents"
    (qa / "nq-open-10_total_documents_gold_at_04.jsonl.gz").write_bytes(
        (qa / "nq-open-10_total_documents_gold_at_4.jsonl.gz").read_bytes()
    )
    cloned = read_clone(clone)
    assert sorted(q.detail for q in cloned.problems if q.reason == "probe_file") == [
        "kv_retrieval_data/kv-retrieval-075_keys.jsonl.gz and 1 more: name the key count of "
        "kv-retrieval-75_keys.jsonl.gz, which is read: not read",
        "qa_data/10_total_documents/nq-open-10_total_documents_gold_at_04.jsonl.gz: name the "
        "size and gold position of nq-open-10_total_documents_gold_at_4.jsonl.gz, which is "
        "read: not read",
    ]
    assert [f for f in cloned.files if "kv-retrieval" in f] == [
        "kv_retrieval_data/kv-retrieval-75_keys.jsonl.gz"
    ]
    assert sum(i.probe_set == "liu/kv-75" for i in cloned.items) == 4


def test_the_files_and_characters_of_one_import_have_a_total(tmp_path, monkeypatch):
    """Past `MAX_IMPORT_FILES` files, or `MAX_IMPORT_CHARS` characters read in all files
    together, the rest of the clone is one problem line and not read."""
    from lilo.tasks.probes import clone as clone_reader

    clone = make_clone(tmp_path / "clone")
    folder = clone / "kv_retrieval_data"
    one = (folder / "kv-retrieval-75_keys.jsonl.gz").read_bytes()
    for size in range(1, 101):  # 100 distinct key counts (75 among them): 104 files in all
        (folder / f"kv-retrieval-{size}_keys.jsonl.gz").write_bytes(one)
    cloned = read_clone(clone)
    assert len(cloned.files) == clone_reader.MAX_IMPORT_FILES == 100
    (left,) = [q.detail for q in cloned.problems if "limit" in q.detail]
    assert left == (
        "qa_data/nq-open-oracle.jsonl.gz and 3 more: not read, the import "
        "reached its limit of 3,000,000,000 characters or 100 files: import the clone's "
        "published files only"
    )
    monkeypatch.setattr(clone_reader, "MAX_IMPORT_CHARS", 47_017)  # 1.5 times the KV file
    small = read_clone(make_clone(tmp_path / "small"))
    details = [q.detail for q in small.problems if q.reason == "probe_file"]
    gold_at = "qa_data/10_total_documents/nq-open-10_total_documents_gold_at_{}.jsonl.gz"
    assert details == [
        f"{gold_at.format(4)}: unreadable after 0 lines: past the import's 47,017 characters "
        "decompressed",
        f"{gold_at.format(9)}: not read, the import reached its limit of 47,017 characters or "
        "100 files: import the clone's published files only",
    ]
    assert small.chars <= clone_reader.MAX_IMPORT_CHARS + 1_000_000


def test_a_template_repeating_a_placeholder_is_refused_and_no_prompt_past_a_window_built(
    tmp_path,
):
    """A 990 KB template naming `{formatted_kv_records}` 44,997 times is refused at import
    (lilo's own stands in); a stored template that would build a prompt past any window is
    refused before the prompt is built."""
    from lilo.tasks.probes.prompts import MAX_PROMPT_CHARS, PromptTooLarge

    clone = make_clone(tmp_path / "clone")
    path = clone / "src" / "lost_in_the_middle" / "prompts" / CLONE_PROMPTS["kv_retrieval"]
    path.write_text("{key}\n" + "{formatted_kv_records}" * 44_997)
    cloned = read_clone(clone)
    assert [q.detail for q in cloned.problems if "kv_retrieval.prompt" in q.detail] == [
        "src/lost_in_the_middle/prompts/kv_retrieval.prompt: uses {formatted_kv_records} "
        "44,997 times, a prompt may use each placeholder at most 3 times; lilo's own stands in"
    ]
    assert "kv_retrieval" not in cloned.prompts
    stored = {**LILO_PROMPTS, "kv_retrieval": "{key}" + "{formatted_kv_records}" * 3}
    records = [(f"{i:036d}", "v" * (MAX_PROMPT_CHARS // 3 // 300)) for i in range(300)]
    with pytest.raises(PromptTooLarge, match=r"^the lilo kv_retrieval prompt would be 40,0"):
        ProbePrompts("lilo", stored).kv(records, "k", query_aware=False)
    assert len(ProbePrompts("lilo", stored).kv(records[:10], "k", query_aware=False)) > 0


def _kv_curve(data: Path) -> dict[int, float]:
    rows = _published(
        data, "SELECT position, accuracy FROM probe_curve WHERE task = 'kv' ORDER BY position"
    )
    return dict(rows)


def test_kv_probe_offline_follows_the_readers_neglect(tmp_path, capsys, prefect_harness):
    data = tmp_path / "data"
    args = ["probe", "kv", "--keys", "75", "--positions", "0,24,49,74", "--examples", "20",
            "--data-dir", str(data)]  # fmt: skip
    assert _lilo(*args, "--set", "llm.offline.middle_neglect=0") == 0
    assert _kv_curve(data) == {0: 1.0, 24: 1.0, 49: 1.0, 74: 1.0}
    assert "lilo[seed=0]" in capsys.readouterr().out  # no clone: lilo-made sets
    assert _lilo(*args, "--set", "llm.offline.middle_neglect=1") == 0
    curve = _kv_curve(data)
    assert max(curve[24], curve[49]) < min(curve[0], curve[74])
    u_depth = _published(data, "SELECT u_depth FROM probe_summary")[0][0]
    assert u_depth == pytest.approx((curve[0] + curve[74]) / 2 - min(curve[24], curve[49]))
    capsys.readouterr()
    assert _lilo(*args, "--set", "llm.offline.middle_neglect=1") == 0
    out = capsys.readouterr().out
    assert "0 LLM calls made, 80 served from cache" in out
    assert _published(data, "SELECT count(*) FROM res_probe_versions") == [(2,)]
    assert _lilo("probe", "kv", "--keys", "10", "--positions", "12", "--data-dir", str(data)) == 2
    assert "outside 0..9" in capsys.readouterr().err


def test_probe_vs_summary_joins_each_backbone(tmp_path):
    """The view beside a summary position curve (rows written as the materialize stage
    writes them) on the same backbone."""
    from lilo.warehouse import Warehouse

    backbone = "offline:offline-extractive-v1"
    with Warehouse(tmp_path / "lilo.duckdb") as wh:
        wh.con.execute(
            "INSERT INTO res_versions (version, created_at, run_id, content_hash, "
            "dataset_version, n_generations, n_rows) VALUES (1, now(), 'r', 'h', 'v1', 1, 3)"
        )
        for position, value in ((1, 80.0), (2, 50.0), (3, 60.0)):
            wh.con.execute(
                "INSERT INTO res_scores (version, generation_id, sample_id, method, "
                "target_words, backbone, score, value) VALUES (1, 'g', 's', 'single', 4000, "
                "?, ?, ?)",
                [backbone, f"single_pos{position}", value],
            )
        wh.con.execute("INSERT INTO res_probe_versions VALUES (1, now(), 'r', 'h', 4, false)")
        for answer, position, correct in (("a", 0, True), ("b", 1, False), ("c", 2, True),
                                          ("d", 1, True)):  # fmt: skip
            wh.con.execute(
                "INSERT INTO res_probe_answers VALUES (1, ?, 'i', 'kv', 'p', 'published', 3, "
                "'position', ?, false, 'lilo', ?, ?, '', NULL)",  # echo: not recorded
                [answer, position, backbone, correct],
            )
        row = wh.rows("SELECT * FROM probe_vs_summary")
    assert len(row) == 1
    assert row[0]["probe_u_depth"] == pytest.approx(0.5)  # ends 1.0, middle 0.5
    assert row[0]["summary_u_depth"] == pytest.approx(0.2)  # (80 + 60) / 2 - 50 = 20 points
    assert row[0]["summary_middle_ratio"] == pytest.approx(50 / 70, abs=1e-4)


def _kv_unit(size: int, position: int, query_aware: bool = False) -> ProbeUnit:
    item = kv_items(size, 1, seed=3)[0]
    return ProbeUnit(item, "lilo[seed=3]", "position", position, query_aware)


@pytest.mark.parametrize(
    "templates", [LILO_PROMPTS, {k: "Clone. " + v for k, v in LILO_PROMPTS.items()}]
)
def test_the_engine_reads_kv_prompts_of_any_wording(templates):
    offline = OfflineSettings(processes=0, middle_neglect=0.0)
    prompts = ProbePrompts("x", templates)
    for position in (0, 37, 74):
        for aware in (False, True):
            unit = _kv_unit(75, position, aware)
            text = reply([{"role": "user", "content": build_prompt(unit, prompts)}], offline)
            assert text.text == unit.item.answers[0]


def test_neglect_is_a_property_of_position_in_a_long_prompt():
    neglect = OfflineSettings(processes=0, middle_neglect=1.0)
    prompts = ProbePrompts("lilo", LILO_PROMPTS)
    # Half-way through a long prompt nothing is read: weight 1 - neglect = 0.
    unit = _kv_unit(300, 150)
    assert (
        reply([{"role": "user", "content": build_prompt(unit, prompts)}], neglect).text == NOT_FOUND
    )
    # A short prompt (10 pairs: about 300 GPT-4o tokens) is read in full.
    for position in range(10):
        unit = _kv_unit(10, position)
        messages = [{"role": "user", "content": build_prompt(unit, prompts)}]
        assert reply(messages, neglect).text == unit.item.answers[0]
    closed = [{"role": "user", "content": prompts.closed_book("when did the oak bridge open")}]
    assert reply(closed, neglect).text == NO_ANSWER


def test_the_nightly_flow_runs_each_probe_on_each_backbone(tmp_path, prefect_harness, monkeypatch):
    from lilo.flows.probe import lilo_probes

    monkeypatch.setenv("LILO_DATA_DIR", str(tmp_path))  # the worker's own
    overrides = {"probe.kv_keys": [8], "probe.examples": 2}
    results = lilo_probes(
        tasks=["kv"], backbones=[{}, {"llm.model": "offline-other"}], overrides=overrides
    )
    assert [(r["backbone"], r["answers"], r["failed"]) for r in results] == [
        ("offline:offline-extractive-v1", 10, 0),
        ("offline:offline-other", 10, 0),
    ]
    with duckdb.connect(str(tmp_path / "published" / "lilo.duckdb"), read_only=True) as con:
        backbones = con.execute("SELECT count(DISTINCT backbone) FROM probe_summary").fetchall()
    assert backbones == [(2,)]


def _paper(paper_id: str, topic: str, sentences: int = 40) -> PaperText:
    text = "\n".join(
        f"The {topic} study measured quantity number {i} of the {topic} system in detail. "
        f"It reported that the {topic} value {i} stayed stable across {i + 2} trials."
        for i in range(sentences)
    )
    return PaperText(paper_id, f"A paper on {topic}", f"\\section{{Intro}}\n{text}", 0, 0, "",
                     "", "", "")  # fmt: skip


def test_multi_document_qa_from_the_warehouse(tmp_path):
    from lilo.tasks.embeddings import Embedder

    papers = {p.paper_id: p for p in (_paper("p1", "glacier"), _paper("p2", "glacier"),
              _paper("p3", "volcano"), _paper("p4", "coral"), _paper("p5", "desert"))}  # fmt: skip
    quote = "It reported that the glacier value 12 stayed stable across 14 trials."
    pair = QAPair("q1", "s1", "single", ("p1",), "How many trials kept the glacier value 12 "
                  "stable?", "stable across 14 trials", ({"paper_id": "p1", "quote": quote},),
                  "approved", 1, "auto", "", "v", "b")  # fmt: skip
    paraphrase = dataclasses.replace(pair, qa_id="q2", answer="fourteen of them")
    settings = Settings(data_dir=tmp_path)
    items, left_out = mdqa_from_warehouse(
        [pair, paraphrase], papers, {"s1": ["p1", "p2"]}, [5, 10], 5, "hard", 0,
        Embedder(settings.embedding, settings.data_dir).embed,
    )  # fmt: skip
    assert left_out == ["q2: its answer is not a span of its evidence passage"]
    assert [(i.probe_set, len(i.context)) for i in items] == [
        ("lilo/mdqa-5[warehouse,hard]", 4), ("lilo/mdqa-10[warehouse,hard]", 9)
    ]  # fmt: skip
    five, ten = items
    assert quote in five.gold["text"] and five.gold["title"] == "A paper on glacier"
    assert list(ten.context[:4]) == list(five.context)  # the same ranking, cut to size
    titles = {d["title"] for d in ten.context}
    assert "A paper on glacier" not in titles  # never from the question's own sample
    assert not any("14 trials" in d["text"] for d in ten.context)  # none holds the answer
    random_items, _ = mdqa_from_warehouse(
        [pair],
        papers,
        {"s1": ["p1", "p2"]},
        [10],
        5,
        "random",
        0,
        Embedder(settings.embedding, settings.data_dir).embed,
    )
    assert random_items[0].probe_set == "lilo/mdqa-10[warehouse,random]"
    assert random_items[0].context != ten.context


def test_lilo_made_kv_sets_are_seeded():
    a, b = kv_items(75, 3, seed=1), kv_items(75, 3, seed=1)
    assert a == b and a != kv_items(75, 3, seed=2)
    for item in a:
        keys = [k for k, _ in item.context]
        assert len(set(keys)) == 75 and (item.question, item.answers[0]) in item.context
        assert all(uuid.UUID(k).version == 4 for k in keys)


def test_a_probe_run_with_failed_calls_is_partial_until_a_rerun_answers_them(
    tmp_path, prefect_harness
):
    """A failed call is an `llm_error` unit, as in scoring: the run and its probe result
    version are `partial` and `lilo failures` lists it; the rerun that answers it ends
    `completed` with a complete version, and clears it."""
    from llm_server import Faults, LLMServer

    from lilo.flows.probe import probe_flow

    def run_status(data: Path) -> str:
        with Warehouse(data / "lilo.duckdb") as wh:
            return wh.scalar("SELECT status FROM runs ORDER BY started_at DESC LIMIT 1")

    def held(data: Path) -> int:
        with Warehouse(data / "lilo.duckdb") as wh:
            return wh.scalar(
                "SELECT count(*) FROM quarantine WHERE stage = 'probe' AND reason = 'llm_error'"
            )

    data = tmp_path / "data"
    probe = {"kv_keys": [10], "positions": [0, 9], "examples": 4}
    with LLMServer() as server:
        settings = server.settings(data, probe=probe)
        server.faults = Faults(rate=0.5, seed=1, kinds=("500",))
        first = probe_flow("kv", settings)
        assert 0 < first.failed < 8 and first.partial
        assert run_status(data) == "partial" and held(data) == first.failed
        server.faults = None
        second = probe_flow("kv", settings)
        assert second.failed == 0 and not second.partial
        assert run_status(data) == "completed" and held(data) == 0
    with Warehouse(data / "lilo.duckdb") as wh:
        versions = wh.con.execute("SELECT partial FROM res_probe_versions ORDER BY version")
        assert versions.fetchall() == [(True,), (False,)]


def test_liu_et_al_published_accuracies_carry_their_table_row_and_column():
    """Table 1's closed-book and oracle accuracy (6 models) and Appendix G's Tables 5-7 by gold
    position (6 models at 10 and 20 documents, 5 at 30: GPT-3.5-Turbo's 4K window holds no 30),
    each naming where in the paper it was read; beside a curve without that cell, `-`."""
    paper = published_litm()
    assert len(paper) == 12 + 6 * 3 + 6 * 5 + 5 * 7
    assert paper.groupby("setting").size().to_dict() == {
        "closed_book": 6, "oracle": 6, "position": 83
    }  # fmt: skip
    assert paper["source"].str.startswith("Liu et al., Lost in the Middle (TACL 2024").all()
    twenty = paper[(paper["size"] == 20) & (paper["model"] == "GPT-3.5-Turbo")]
    assert list(twenty["position"]) == [0, 4, 9, 14, 19]
    assert list(twenty["accuracy"]) == [0.758, 0.572, 0.538, 0.554, 0.632]
    gpt = paper[(paper["model"] == "GPT-3.5-Turbo") & (paper["setting"] != "position")]
    assert dict(zip(gpt["setting"], gpt["accuracy"], strict=True)) == {
        "closed_book": 0.561, "oracle": 0.883
    }  # fmt: skip
    assert sorted(paper.loc[paper["size"] == 30, "position"].unique()) == [0, 4, 9, 14, 19, 24, 29]
    curve = pd.DataFrame(
        [("mdqa", "published", "b", False, "lilo", "position", 20, 9, 0.5, 0.3, 0.7, 10),
         ("mdqa", "published", "b", False, "lilo", "closed_book", 20, None, 0.2, 0.1, 0.3, 4),
         ("mdqa", "published", "b", False, "lilo", "closed_book", 10, None, 0.4, 0.1, 0.6, 6),
         ("kv", "published", "b", False, "lilo", "position", 75, 0, 1.0, 0.9, 1.0, 5)],
        columns=["task", "variant", "backbone", "query_aware", "prompts", "setting", "size",
                 "position", "accuracy", "ci_low", "ci_high", "n"],
    )  # fmt: skip
    both = beside_published(curve)
    assert len(both) == len(paper) and set(both["lilo panel"]) == {"b, published"}
    at = both[(both["model"] == "GPT-3.5-Turbo") & (both["documents"] == 20)]
    assert list(at["lilo"].fillna(-1)) == [-1, -1, 0.5, -1, -1]
    closed = both[(both["model"] == "Claude-1.3") & (both["setting"] == "closed_book")].iloc[0]
    assert (closed["published"], closed["lilo"], closed["lilo n"]) == (0.483, 0.32, 10)
    assert beside_published(curve.iloc[0:0])["lilo"].isna().all()
