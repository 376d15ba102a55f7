"""`lilo report` and the run's artifacts: the page's numbers are the warehouse's views',
the page needs nothing from outside, and the materialize stage leaves both behind."""

from __future__ import annotations

import json
import math
import re
import shutil
import socket
from html.parser import HTMLParser
from pathlib import Path

import duckdb
import pandas as pd
import pytest
from artifacts import latest_artifacts, read_artifacts
from conftest import REPORT_LENGTHS, REPORT_SAMPLES, copy_data_dir, pipeline_run_id

from lilo.flows.cli import main


class _Tables(HTMLParser):
    """Each <table id=...> of a page as its header and rows of cell text."""

    def __init__(self) -> None:
        super().__init__()
        self.tables: dict[str, list[list[str]]] = {}
        self.images: list[str] = []
        self.external: list[str] = []
        self._table: str | None = None
        self._cell: list[str] | None = None

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        attr = dict(attrs)
        if tag == "table":
            self._table = attr["id"]
            self.tables[self._table] = []
        elif tag == "tr" and self._table:
            self.tables[self._table].append([])
        elif tag in ("td", "th") and self._table:
            self._cell = []
        elif tag == "img":
            self.images.append(attr.get("src") or "")
        if tag in ("script", "link", "iframe") or any(
            (v or "").startswith(("http:", "https:", "//")) for k, v in attrs if k != "href"
        ):
            self.external.append(tag)

    def handle_data(self, data: str) -> None:
        if self._cell is not None:
            self._cell.append(data)

    def handle_endtag(self, tag: str) -> None:
        if tag in ("td", "th") and self._cell is not None and self._table:
            self.tables[self._table][-1].append("".join(self._cell))
            self._cell = None
        elif tag == "table":
            self._table = None


def _page(path: Path) -> _Tables:
    parser = _Tables()
    parser.feed(path.read_text(encoding="utf-8"))
    return parser


def _same(shown: str, value: object) -> bool:
    """A cell's text against the view's value: the same number, word or nothing."""
    if value is None or (isinstance(value, float) and math.isnan(value)):
        return shown == "–"
    if isinstance(value, bool):
        return shown == ("yes" if value else "no")
    if isinstance(value, int | float):
        return math.isclose(float(shown), float(value), abs_tol=1e-9)
    return shown == str(value)


def _assert_table_is_view(page: _Tables, table: str, view: pd.DataFrame) -> None:
    header, *rows = page.tables[table]
    assert header == list(view.columns)
    assert len(rows) == len(view) > 0
    for shown, record in zip(rows, view.astype(object).to_dict(orient="records"), strict=True):
        for text, (column, value) in zip(shown, record.items(), strict=True):
            assert _same(text, value), (table, column, text, value)


@pytest.fixture(scope="module")
def demo(tmp_path_factory, report_demo) -> Path:
    """A copy of the session's `lilo demo` with REPORT_DEMO (tests/conftest.py): `lilo report`
    writes its page."""
    return copy_data_dir(report_demo, tmp_path_factory.mktemp("report") / "data")


@pytest.fixture(scope="module")
def run_id(report_demo) -> str:
    """The demo's pipeline flow run: the artifacts its materialize stage made."""
    return pipeline_run_id(report_demo)


@pytest.fixture(scope="module")
def views(demo) -> dict[str, pd.DataFrame]:
    con = duckdb.connect(str(demo / "published" / "lilo.duckdb"), read_only=True)
    try:
        return {
            v: con.execute(f"SELECT * FROM {v}").df()
            for v in ("leaderboard", "position_curve", "cost", "failures", "res_versions")
        }
    finally:
        con.close()


@pytest.fixture(scope="module")
def report(demo) -> Path:
    """What `lilo report` printed: the page's path."""
    import contextlib
    import io

    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        assert main(["report", "--data-dir", str(demo)]) == 0
    return Path(out.getvalue().strip())


def test_the_page_sits_next_to_the_versions_parquet(report, views, demo):
    version = int(views["res_versions"]["version"].max())
    folder = demo / "published" / "results" / f"version={version:04d}"
    assert report == (folder / "report.html").resolve()
    assert (folder / "res_scores.parquet").exists()


def test_the_page_states_what_the_version_holds(report):
    """The version's scope, what its run asked for, under the title."""
    assert re.search(
        rf'<p class="meta" id="scope">Scope: {REPORT_SAMPLES} of {REPORT_SAMPLES} samples of '
        r"dataset \S+; methods single, "
        r"ral_writer; lengths 1k, 2k; backbone offline:\S+; judge offline:\S+</p>",
        report.read_text(encoding="utf-8"),
    )


def test_leaderboard_position_curve_and_cost_equal_the_views(report, views):
    page = _page(report)
    _assert_table_is_view(page, "leaderboard-view", views["leaderboard"])
    for table in ("position_curve", "cost"):
        _assert_table_is_view(page, table, views[table])
    assert {"judge", "scored", "expected", "partial"} <= set(page.tables["leaderboard-view"][0])


def test_the_leaderboard_comes_first_as_table_2(report, views):
    """Method x length x S_l, S_c, S_q, S_copy (each with its interval) and n, then Overall: the
    paper's Table 2, before the view's other columns; its numbers are the view's."""
    groups, scores, *rows = _page(report).tables["leaderboard"]
    assert groups == ["method", "1k", "2k", "Overall"]
    assert scores == ["S_l", "S_c", "S_q", "S_copy", "n"] * 3
    lb = views["leaderboard"]
    assert [r[0] for r in rows] == list(dict.fromkeys(lb["variant"]))

    def shown(value, low, high) -> str:  # no interval below 6 samples (tasks/stats.py)
        return f"{value:.1f}" if math.isnan(low) else f"{value:.1f}[{low:.1f}, {high:.1f}]"

    for row in rows:
        cells = lb[lb["variant"] == row[0]].sort_values("target_words")
        expected = []
        for r in cells.itertuples():
            expected += [shown(getattr(r, c), getattr(r, f"{c}_low"), getattr(r, f"{c}_high"))
                         for c in ("s_l", "s_c", "s_q", "s_copy")]  # fmt: skip
            expected.append(f"{r.scored}/{r.expected}")
        first = cells.iloc[0]
        expected += [
            shown(first[f"overall_{c}"], first[f"overall_{c}_low"], first[f"overall_{c}_high"])
            for c in ("s_l", "s_c", "s_q", "s_copy")
        ]
        expected.append(f"{cells['scored'].sum()}/{cells['expected'].sum()}")
        assert row[1:] == expected


def test_dataset_statistics_equal_the_warehouse(report, demo):
    con = duckdb.connect(str(demo / "published" / "lilo.duckdb"), read_only=True)
    try:
        (samples, words_max) = con.execute(
            "SELECT count(*), max(input_words) FROM dim_samples"
        ).fetchall()[0]
    finally:
        con.close()
    text = report.read_text(encoding="utf-8")
    assert f'<span id="stats-samples">{samples}</span>' in text
    header, row = _page(report).tables["stats-words"]
    assert float(row[header.index("max")]) == words_max


def test_the_page_is_self_contained(report):
    page = _page(report)
    assert page.external == []
    # position curve, lengths, S_c, cost and the histogram, all embedded
    assert len(page.images) == 5
    assert all(src.startswith("data:image/png;base64,") for src in page.images)


def test_materialize_wrote_the_report_and_the_run_artifacts(demo, report, run_id):

    assert report.exists() and report.stat().st_size > 10_000
    wanted = {
        "leaderboard",
        "position-curve",
        "position-curve-plot",
        "dataset-v1-stats",
        "qa-quality-v1",
        "cost",
        "failures",
        "run-summary",
    }
    assert {a.key for a in read_artifacts(*wanted, flow_run=run_id)} == wanted


def test_the_page_and_the_artifacts_show_overall_and_the_dataset_version(
    demo, report, run_id, report_demo
):

    header = _page(report).tables["leaderboard-view"][0]
    assert {"dataset_version", "overall_s_l", "overall_s_c", "overall_s_q"} <= set(header)
    latest = latest_artifacts("leaderboard", "results", flow_run=run_id)
    board, results = str(latest["leaderboard"].data), str(latest["results"].data)
    assert "overall_s_c" in board and '"dataset_version": "v1"' in board
    # Scores first, what they were measured with after: nothing to scroll to for a score.
    rows = json.loads(latest["leaderboard"].data)
    assert list(rows[0])[:8] == ["variant", "target_words", "s_l", "s_c", "s_q", "s_copy",
                                 "scored", "expected"]  # fmt: skip
    assert list(rows[0])[-6:] == ["method", "backbone", "judge", "dataset_version", "failed",
                                  "partial"]  # fmt: skip
    # Table 2 with a row per length: as narrow as the UI's Markdown column.
    assert "| method | length | S_l | S_c | S_q | S_copy | n |" in results
    assert max(len(line) for line in results.splitlines() if line.startswith("|")) < 110
    assert "| Overall |" in results.replace("|  | Overall |", "| Overall |")
    assert "Leaderboard: dataset v1, result version 1" in results
    # The report is a file on the worker: the summary names the machine and how to open it.
    summary = str(latest_artifacts("run-summary", flow_run=run_id)["run-summary"].data)
    written = report_demo / report.relative_to(demo.resolve())  # the demo's, not this copy's
    assert written.exists()
    assert f"`{socket.gethostname()}`: `{written}`" in summary and "Open it in a browser" in summary


def test_an_unknown_version_is_one_line_and_exit_1(demo, capsys):
    assert main(["report", "--data-dir", str(demo), "--result-version", "99"]) == 1
    err = capsys.readouterr().err
    assert err.startswith("lilo: no result version 99: there are 1") and err.count("\n") == 1


def test_a_folder_without_a_warehouse_is_one_line_and_exit_2(tmp_path, capsys):
    assert main(["report", "--data-dir", str(tmp_path)]) == 2
    assert capsys.readouterr().err.startswith(f"lilo: no warehouse at {tmp_path}")
    assert not (tmp_path / "lilo.duckdb").exists()


class _Links(HTMLParser):
    def __init__(self) -> None:
        super().__init__()
        self.hrefs: list[str] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        if tag == "a":
            self.hrefs.append(dict(attrs)["href"] or "")


def _links(path: Path) -> list[str]:
    parser = _Links()
    parser.feed(path.read_text(encoding="utf-8"))
    return parser.hrefs


def _summaries(demo: Path) -> list[dict]:
    """Each summary of the latest version with its consistency detail, from the warehouse."""
    import json

    con = duckdb.connect(str(demo / "published" / "lilo.duckdb"), read_only=True)
    try:
        rows = con.execute(
            "SELECT DISTINCT r.sample_id, coalesce(r.variant, r.method) AS method, "
            "r.target_words, c.detail AS consistency, q.detail AS quality "
            "FROM res_scores r JOIN fct_scores c ON c.generation_id = r.generation_id "
            "AND c.score = 'consistency' JOIN fct_scores q ON q.generation_id = r.generation_id "
            "AND q.score = 'quality' WHERE r.version = (SELECT max(version) FROM res_versions) "
            "AND coalesce(r.rotation, 0) = 0"
        ).df()
    finally:
        con.close()
    return [
        {**r, "consistency": json.loads(r["consistency"]), "quality": json.loads(r["quality"])}
        for r in rows.to_dict(orient="records")
    ]


def test_each_leaderboard_number_leads_to_every_answer(report, views, demo):
    """report -> cell page -> sample page: each leaderboard cell's numbers link to its
    summaries, each summary to its sample's page, which holds every QA pair it was asked
    (answer given, grade, reason) and every checklist grade."""
    summaries = _summaries(demo)
    cells = sorted({h for h in _links(report) if h.startswith("cells/")})
    assert len(cells) == len(views["leaderboard"]) == 4  # 2 methods x 2 lengths
    for href in cells:
        cell = report.parent / href
        header, *rows = _page(cell).tables["cell"]
        method, words = cell.stem.rsplit("-", 1)
        expected = [
            s for s in summaries if (s["method"], s["target_words"]) == (method, int(words))
        ]
        assert (
            header[:3] == ["sample", "backbone", "words"]
            and len(rows) == len(expected) == REPORT_SAMPLES
        )
        to_samples = [link for link in _links(cell) if "#" in link]
        assert len(to_samples) == REPORT_SAMPLES
        for link in to_samples:
            page_path, anchor = (cell.parent / link).resolve().as_posix().split("#")
            sample_page = Path(page_path)
            sample = next(s for s in expected if s["sample_id"] == sample_page.stem)
            tables = _page(sample_page).tables
            header, *answers = tables[f"answers-{anchor}"]
            questions = sample["consistency"]["questions"]
            assert len(answers) == len(questions) > 0
            for shown, q in zip(answers, questions, strict=True):
                assert (shown[2], shown[4], shown[6]) == (q["question"], q["answer"], q["reason"])
                assert math.isclose(float(shown[5]), q["score"], abs_tol=0.005)
            _, *grades = tables[f"checklist-{anchor}"]
            assert {a: round(float(g), 2) for a, g in grades} == {
                a: round(v, 2) for a, v in sample["quality"]["aspects"].items()
            }


def test_lilo_show_prints_the_summary_then_every_answer(demo, capsys):
    summaries = _summaries(demo)
    chosen = next(s for s in summaries if (s["method"], s["target_words"]) == ("ral_writer", 1000))
    prefix = chosen["sample_id"][:8]
    common = ["--data-dir", str(demo), "--method", "ral_writer", "--target-words", "1000"]
    assert main(["show", prefix, *common]) == 0
    out = " ".join(capsys.readouterr().out.split())
    # A cross-paper pair is about no one position: it says so, not "position 0".
    assert "(cross-paper)" in out and "position 0" not in out and "paper 0" not in out
    assert f"ral_writer, 1000 words · sample {chosen['sample_id']}" in out
    at = 0
    for q in chosen["consistency"]["questions"]:  # in order, after the summary
        asked = out.index(" ".join(q["question"].split()), at)
        at = out.index(f"given: {' '.join(q['answer'].split())}", asked)
    assert all(a in out for a in chosen["quality"]["aspects"])
    # Without --method or --target-words: a line per summary and how to see one whole.
    assert main(["show", prefix, "--data-dir", str(demo)]) == 0
    overview = capsys.readouterr().out
    assert len(overview.splitlines()) < 20 and chosen["consistency"]["questions"][0][
        "question"
    ] not in " ".join(overview.split())
    rows = [line for line in overview.splitlines() if line.startswith("│")]
    assert len(rows) == 4 and "--method single --target-words 1000" in overview  # 2 x 2
    assert main(["show", "nosuchsample", "--data-dir", str(demo)]) == 2
    assert "sample nosuchsample has no summaries in result version" in capsys.readouterr().err


def test_the_page_and_the_artifacts_carry_intervals_and_the_paired_comparison(demo, report, run_id):
    """Each score's interval beside it (the view's `_low`/`_high`), and under the table
    single minus ral_writer paired by sample, as `res_paired` holds it. At 2 samples every
    difference is "n too small": the table is folded under one line, so it no longer stands
    between the leaderboard and the first figure."""

    page = _page(report)
    header = page.tables["leaderboard-view"][0]
    assert header.index("s_c_low") == header.index("s_c") + 1
    assert {"s_l_high", "s_q_low", "overall_s_c_low", "overall_s_c_high"} <= set(header)
    con = duckdb.connect(str(demo / "published" / "lilo.duckdb"), read_only=True)
    try:
        paired = con.execute(
            "SELECT target_words, score, difference, p_value, within_noise FROM res_paired "
            "WHERE variant = 'single' AND reference = 'ral_writer'"
        ).fetchall()
    finally:
        con.close()
    head, *rows = page.tables["paired"]
    assert head == ["method", "length", "score", "diff", "95% interval", "p", "within noise"]
    assert len(rows) == len(paired) == 9  # two lengths and Overall, three scores
    assert {r[4] for r in rows} == {"n too small"}
    text = " ".join(report.read_text(encoding="utf-8").split())
    assert (
        '<details id="paired-folded"><summary>Paired comparison: 9 differences, each with n '
        "too small (fewer than 6 samples scored by both methods)" in text
    )
    assert "<h3>Paired with" not in text
    assert rows[0][0] == "single" and [r[1] for r in rows[-3:]] == ["Overall"] * 3
    by = {({1000: "1k", 2000: "2k", 0: "Overall"}[t], s): (d, p, w) for t, s, d, p, w in paired}
    names = {"S_l": "length", "S_c": "consistency", "S_q": "quality"}
    for _, length, score, diff, _, p, noise in rows:
        d, pv, within = by[(length, names[score])]
        assert (diff, noise) == (f"{d:+.1f}", "yes" if within else "no")
        assert p == ("<0.001" if pv < 0.001 else f"{pv:.3f}")
    latest = latest_artifacts("leaderboard", "results", flow_run=run_id)
    assert '"s_c_low"' in str(latest["leaderboard"].data)
    results = str(latest["results"].data)
    assert "Paired with ral_writer" in results and "| within noise |" in results


def test_a_result_folder_that_is_a_link_is_not_written_through(demo, tmp_path, capsys):
    """Someone replaced a result version's folder by a link, and the reproduction's page by
    a link to a file of theirs: the report is refused with one line, the page replaces its
    link; nothing outside the data dir is written."""
    from prefect import flow

    from lilo.flows.reproduce import write_paper_page
    from lilo.tasks.config import Settings

    data = tmp_path / "data"
    shutil.copytree(demo, data)
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    (elsewhere / "notes.txt").write_text("mine")
    results = data / "published" / "results"
    (folder,) = results.glob("version=*")
    shutil.rmtree(folder)
    folder.symlink_to(elsewhere)
    page = results / f"ral-writer-v{int(folder.name.split('=')[1]):04d}.html"
    page.symlink_to(elsewhere / "notes.txt")

    assert main(["report", "--data-dir", str(data)]) == 2
    assert capsys.readouterr().err == (
        f"lilo: {folder} is a link or a file, not a folder: lilo writes only inside its data "
        "dir; remove it (lilo makes the folder again)\n"
    )
    # In a flow, as `reproduce_ral_writer` calls it: its figures are that run's artifacts.
    write = flow(name="paper-page")(write_paper_page)
    assert write(Settings(data_dir=data), REPORT_LENGTHS, pd.DataFrame()) == page
    assert not page.is_symlink() and page.read_text().startswith("<!doctype html>")
    assert sorted(p.name for p in elsewhere.iterdir()) == ["notes.txt"]
    assert (elsewhere / "notes.txt").read_text() == "mine"


@pytest.mark.parametrize(
    ("markdown", "shown"),
    [
        ("[a](javascript:alert(1))", "[a]\\(javascript:alert(1))"),
        ("![a](vbscript:x)", "![a]\\(vbscript:x)"),
        ("[a](JaVa&#x53;cript:x)", "[a]\\(JaVa&#x53;cript:x)"),
        ("[a]( <javascript:x>)", "[a]\\( &lt;javascript:x>)"),
        ("[a](data:text/html,x)", "[a]\\(data:text/html,x)"),
        ("text\n[a]: javascript:x\n[a]", "text\n\\[a]: javascript:x\n[a]"),
        (
            "<javascript:x> <img src=x onerror=y> </p>",
            "&lt;javascript:x> &lt;img src=x onerror=y> &lt;/p>",
        ),
        ("[ok](https://a.org/x) ![p](data:image/png;base64,AA) [k](/artifacts/key/k)", None),
        ("a < b, 3 > 2, x[0](1)", None),
    ],
)
def test_artifact_markdown_never_links_to_a_script(markdown, shown):
    from lilo.tasks.formatting import safe_markdown

    assert safe_markdown(markdown) == (markdown if shown is None else shown)


def test_the_paper_page_holds_every_published_value_and_each_claim(demo, views, tmp_path):
    """The reproduction page of the demo's run (Single and RAL-Writer at two lengths on a
    backbone the paper did not run): the paper's 40 Table 2 rows alone, then lilo's; Table 4's
    12 values; the paper checked against itself; every claim with lilo's side; and lilo's
    Overall, in the leaderboard as on the page, the mean of its lengths."""
    from prefect import flow

    from lilo.flows.reproduce import write_paper_page
    from lilo.tasks.config import Settings
    from lilo.tasks.reproduce.claims import COLUMNS

    data = tmp_path / "data"
    shutil.copytree(demo, data)
    write = flow(name="paper-page")(write_paper_page)
    tables = _page(write(Settings(data_dir=data), REPORT_LENGTHS, pd.DataFrame())).tables

    header, *rows = tables["table2-published-table"]
    assert header[:3] == ["backbone", "method", "length"] and header[-2:] == ["n", "lilo backbone"]
    paper, lilo = rows[:40], rows[40:]
    assert {r[0] for r in paper} == {
        "GPT-4o", "LongWriter-glm4-9b", "Qwen2.5-14B-Instruct", "Qwen2.5-32B-Instruct"
    }  # fmt: skip
    assert all(r[header.index("S_c lilo")] == "-" for r in paper)
    assert sum(r[header.index("S_c paper")].endswith(" *") for r in paper) == 8
    lengths = [f"{t // 1000}k" for t in REPORT_LENGTHS] + ["Overall"]
    assert [(r[1], r[2]) for r in lilo] == [
        (m, length) for m in ("ral_writer", "single") for length in lengths
    ]
    assert all(r[header.index("S_c lilo")] != "-" for r in lilo)
    assert all(r[header.index("n")] == str(REPORT_SAMPLES) for r in lilo)

    header, *rows = tables["table4-published-table"]
    assert len(rows) == 12 and {r[header.index("lilo")] for r in rows} == {"-"}

    header, *rows = tables["overall-check-table"]
    assert len(rows) == 30 and [r[header.index("agrees")] for r in rows].count("no") == 1

    header, *rows = tables["claims-table"]
    assert header == COLUMNS and len(rows) >= 27
    by = {(r[0], r[header.index("lilo_setting")]): r for r in rows}
    overall = f"Overall ({', '.join(lengths[:2])})"
    row = by[("Qwen2.5-14B-Instruct, Overall: ral_writer first on S_c",
              f"{overall}: " + ("ral_writer - single"))]  # fmt: skip
    assert row[header.index("agrees")] in ("yes", "no") and row[header.index("n")] == "2"
    assert "n too small" in row[header.index("difference")]  # 2 samples: no interval
    assert row[header.index("reproduced")] == "no"
    assert all(r[header.index("agrees")] == "not run" for r in rows if ", 16k: " in r[0])

    board = views["leaderboard"]
    for score in ("s_l", "s_c", "s_q"):
        for _, cell in board.groupby("variant"):
            assert cell[f"overall_{score}"].iloc[0] == pytest.approx(cell[score].mean(), abs=0.011)
