"""Seen as a person sees it: a real headless Chromium fills the QA review form of a paused
run in a local Prefect server's UI, opens a pipeline run's Artifacts tab there, and opens
the `lilo report` page.

Needs Debian's `chromium` (`apt-get install chromium`; `.ci/run` installs it) or the binary
named by LILO_CHROMIUM; skipped, saying so, where there is none. Screenshots go to
LILO_SCREENSHOTS when set (else the test's temporary folder).
"""

from __future__ import annotations

import contextlib
import io
import json
import os
import signal
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import duckdb
import httpx
import pytest
from conftest import MANUAL_REVIEW_DEMO, copy_data_dir
from llm_server import LLMServer

from lilo.flows.cli import main

CHROMIUM = Path(os.environ.get("LILO_CHROMIUM", "/usr/bin/chromium"))
# No network, no first-run or background work: the machine may have no internet at all.
# No emulated GPU: without --disable-software-rasterizer, a headless Chromium draws every
# frame through SwiftShader in a GPU process (86 s of CPU in one run of this file).
CHROMIUM_ARGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-software-rasterizer",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
]
REPO = Path(__file__).resolve().parent.parent
DEMO = MANUAL_REVIEW_DEMO  # the session's demo (tests/conftest.py), run again by the tests
SERVER_START_S = 600  # `prefect server start` builds its UI on start; slow on a loaded machine

pytestmark = [
    pytest.mark.skipif(
        not CHROMIUM.exists(),
        reason=f"no browser: {CHROMIUM} is missing "
        "(apt-get install chromium, or set LILO_CHROMIUM)",
    ),
    pytest.mark.e2e,  # a Prefect server with its UI, demos, Chromium
    pytest.mark.slow,
]


def _sql(data: Path, query: str) -> list[tuple[Any, ...]]:
    con = duckdb.connect(str(data / "lilo.duckdb"), read_only=True)
    try:
        return con.execute(query).fetchall()
    finally:
        con.close()


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@pytest.fixture(scope="module")
def shots(tmp_path_factory) -> Path:
    folder = Path(os.environ.get("LILO_SCREENSHOTS") or tmp_path_factory.mktemp("shots"))
    folder.mkdir(parents=True, exist_ok=True)
    return folder


@pytest.fixture(scope="module")
def prefect_env(tmp_path_factory, used_prefect_home) -> dict[str, str]:
    """The environment of a Prefect server with its UI, and of the processes using it."""
    home = used_prefect_home(tmp_path_factory.mktemp("prefect-ui") / "home")
    port = _free_port()
    env = {k: v for k, v in os.environ.items() if not k.startswith("PREFECT_API_")}
    return {
        **env,
        "PREFECT_HOME": str(home),
        "PREFECT_API_DATABASE_CONNECTION_URL": f"sqlite+aiosqlite:///{home / 'prefect.db'}",
        "PREFECT_SERVER_ANALYTICS_ENABLED": "false",
        "PREFECT_API_URL": f"http://127.0.0.1:{port}/api",
        "PREFECT_UI_URL": f"http://127.0.0.1:{port}",
        "PREFECT_LOGGING_LEVEL": "INFO",  # the review run's lines, as a deployment sends them
        "PREFECT_LOGGING_EXTRA_LOGGERS": "lilo",  # as the deployments set it
        "LILO_UI_PORT": str(port),
    }


@pytest.fixture(scope="module")
def ui(prefect_env, tmp_path_factory) -> Iterator[str]:
    """`prefect server start` on a free loopback port, PREFECT_HOME in a temporary folder."""
    log = tmp_path_factory.mktemp("prefect-log") / "server.log"
    port = prefect_env["LILO_UI_PORT"]
    with log.open("wb") as out:
        server = subprocess.Popen(
            [Path(sys.executable).parent / "prefect", "server", "start"]
            + ["--host", "127.0.0.1", "--port", port],
            env=prefect_env,
            stdout=out,
            stderr=subprocess.STDOUT,
            start_new_session=True,
        )
    base = prefect_env["PREFECT_UI_URL"]
    try:
        deadline = time.monotonic() + SERVER_START_S
        while True:
            with contextlib.suppress(httpx.HTTPError):
                if httpx.get(f"{base}/api/health", timeout=5).status_code == 200:
                    break
            assert server.poll() is None, log.read_text(errors="replace")[-2000:]
            assert time.monotonic() < deadline, "the Prefect server did not start"
            time.sleep(1)
        yield base
    finally:
        os.killpg(server.pid, signal.SIGTERM)
        server.wait(timeout=30)


@pytest.fixture(scope="module")
def browser() -> Iterator[Any]:
    from playwright.sync_api import sync_playwright

    with sync_playwright() as p:
        chromium = p.chromium.launch(executable_path=str(CHROMIUM), args=CHROMIUM_ARGS)
        yield chromium
        chromium.close()


@pytest.fixture
def new_page(browser) -> Iterator[Any]:
    """Opens pages in the module's Chromium, each closed when the test ends: a page left open
    (the Prefect UI polls and redraws) keeps Chromium's software GPU process busy."""
    opened: list[Any] = []

    def open_page(**kwargs: Any) -> Any:
        opened.append(browser.new_page(**kwargs))
        return opened[-1]

    yield open_page
    for page in opened:
        page.close()


@pytest.fixture(scope="module")
def data(tmp_path_factory, manual_review_demo) -> Path:
    """A copy of `lilo demo --review manual` (tests/conftest.py): pairs wait for a
    reviewer, nothing is summarized yet."""
    return copy_data_dir(manual_review_demo, tmp_path_factory.mktemp("browser") / "data")


def _field(page: Any, label: str) -> Any:
    """The form field whose label is exactly `label` (a pair's, or one inside it)."""
    return page.locator(
        "xpath=//span[contains(@class, 'schema-form-property__label') and "
        f"normalize-space(.) = '{label}']/ancestor::div[contains(concat(' ', @class, ' '), "
        "' schema-form-property ')][1]"
    )


def _choose(page: Any, field: Any, option: str) -> None:
    field.locator(".p-select-button__control").first.click()
    page.keyboard.press("ArrowDown")  # opens the option list
    page.locator(".p-select-option", has_text=option).first.click()


def _paused_run(api: str, timeout_s: float = 300) -> str:
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        runs = httpx.post(
            f"{api}/flow_runs/filter",
            json={"flow_runs": {"state": {"type": {"any_": ["PAUSED"]}}}},
            timeout=30,
        ).json()
        if runs:
            return str(runs[0]["id"])
        time.sleep(1)
    raise AssertionError("the review flow never paused for its form")


def test_review_form_filled_in_the_prefect_ui(data, ui, prefect_env, new_page, shots):
    (sample,) = _sql(data, "SELECT min(sample_id) FROM dim_samples")[0]
    overrides = {
        "qa.review_poll_s": 1,
        "qa.review_batch": 50,
        "qa.review_timeout_s": 600,
    }
    review = subprocess.Popen(
        [
            sys.executable,
            "-c",
            "import json, sys; from lilo.flows.qa_review import qa_review; "
            "print(json.dumps(qa_review(sample=sys.argv[1], overrides=json.loads(sys.argv[2]))))",
            sample,
            json.dumps(overrides),
        ],
        cwd=REPO,
        env={**prefect_env, "LILO_DATA_DIR": str(data)},  # a worker's own data dir
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
    )
    try:
        run_id = _paused_run(prefect_env["PREFECT_API_URL"])
        _same_form_in_the_v2_ui(new_page, ui, run_id, shots)
        page = new_page(viewport={"width": 1280, "height": 2400})
        page.goto(f"{ui}/runs/flow-run/{run_id}", wait_until="networkidle", timeout=120_000)
        page.get_by_role("button", name="Resume").first.click()
        _field(page, "Your name").locator("textarea, input").first.fill("carla")
        n = page.locator(".schema-form-property__label", has_text="Decision on pair").count()
        pending = _sql(
            data,
            f"SELECT count(*) FROM fct_qa_pairs WHERE sample_id = '{sample}' "
            "AND status = 'pending'",
        )[0][0]
        assert n == pending >= 3  # one fixed entry per pair
        # Nothing to add, remove or reorder, and no id to edit: a pair's ids are its title.
        modal = page.locator(".p-modal__card")
        assert modal.get_by_text("Add item").count() == 0
        assert modal.locator(".schema-form-property-array-item").count() == 0
        assert modal.get_by_text("QUESTION:").count() == n
        assert modal.get_by_text("EVIDENCE 1 from").count() >= n
        for i in range(1, n + 1):
            _choose(page, _field(page, f"Decision on pair {i} (Optional)"), "approve")
        _choose(page, _field(page, "Decision on pair 2 (Optional)"), "reject")
        pair2 = _field(page, next(t for t in _pair_titles(page) if t.startswith("Pair 2 of")))
        _field(pair2, "Reason (Optional)").locator("textarea").fill(
            "not answerable from the papers"
        )
        _choose(page, _field(page, "Decision on pair 3 (Optional)"), "edit")
        pair3 = _field(page, next(t for t in _pair_titles(page) if t.startswith("Pair 3 of")))
        question = _field(pair3, "Question (change it to edit)").locator("textarea")
        question.fill("Edited: " + question.input_value())
        page.screenshot(path=str(shots / "review-form.png"))
        modal.get_by_role("button", name="Submit").click()
        # Submitted: the form closes (a form it refuses stays open, saying why).
        try:
            modal.wait_for(state="hidden", timeout=120_000)
        except Exception as error:  # playwright's TimeoutError
            page.screenshot(path=str(shots / "review-form-not-submitted.png"), full_page=True)
            text = modal.inner_text()[-2000:]
            raise AssertionError(f"the form did not close: {text}") from error
        page.close()
        out, _ = review.communicate(timeout=300)
    finally:
        if review.poll() is None:
            review.kill()
    totals = json.loads(out.strip().splitlines()[-1])
    assert (totals["decisions"], totals["problems"], totals["timed_out"]) == (n, [], False)
    decisions = dict(
        _sql(
            data,
            "SELECT action, count(*) FROM fct_qa_decisions WHERE reviewer = 'carla' "
            "AND channel = 'ui' GROUP BY 1",
        )
    )
    assert decisions == {"approve": n - 2, "reject": 1, "edit": 1}
    (edited,) = _sql(
        data, "SELECT question, original_question FROM fct_qa_decisions WHERE action = 'edit'"
    )
    assert edited[0] == "Edited: " + edited[1]
    done = f"qa-review: batch 1: {n} decisions recorded, 0 not recorded, 0 already so"
    deadline, messages = time.monotonic() + 60, []  # logs are shipped in batches
    while done not in messages and time.monotonic() < deadline:
        time.sleep(1)
        logs = httpx.post(
            f"{prefect_env['PREFECT_API_URL']}/logs/filter",
            json={"logs": {"flow_run_id": {"any_": [run_id]}}},
            timeout=30,
        ).json()
        messages = [entry["message"] for entry in logs]
    assert done in messages
    assert sum(m.startswith("qa-review: edit ") for m in messages) == 1


def _same_form_in_the_v2_ui(new_page: Any, ui: str, run_id: str, shots: Path) -> None:
    """The V2 UI shows the same form: the context beside each decision, the text in full."""
    page = new_page(viewport={"width": 1280, "height": 2000})
    page.goto(f"{ui}/v2/runs/flow-run/{run_id}", wait_until="load", timeout=120_000)
    page.locator("button[aria-haspopup=menu]").first.click(timeout=120_000)
    page.get_by_role("menuitem", name="Resume").first.click()
    dialog = page.get_by_role("dialog")
    # The decision has a default ("keep as is"): the V2 UI calls such a field optional.
    dialog.get_by_text("Decision on pair 1 (Optional)", exact=True).wait_for(timeout=60_000)
    assert dialog.get_by_text("Your name", exact=True).count() == 1
    assert dialog.get_by_text("Add item").count() == 0
    assert dialog.get_by_text("EVIDENCE 1 from").count() >= 1
    page.screenshot(path=str(shots / "review-form-v2.png"))
    page.close()


def _pair_titles(page: Any) -> list[str]:
    return [
        t.strip()
        for t in page.locator(".schema-form-property__label").all_inner_texts()
        if t.strip().startswith("Pair ")
    ]


def test_report_page_in_chromium(data, new_page, shots):
    samples = [r[0] for r in _sql(data, "SELECT sample_id FROM dim_samples ORDER BY 1")]
    common = ["--data-dir", str(data), "--reviewer", "dee"]
    assert main(["review", "approve", "--sample", samples[-1], *common]) == 0
    assert main(["demo", *DEMO, "--data-dir", str(data)]) == 0
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        assert main(["report", "--data-dir", str(data)]) == 0
    report = Path(out.getvalue().strip())
    page = new_page(viewport={"width": 1280, "height": 900})
    errors: list[str] = []
    page.on("console", lambda m: errors.append(m.text) if m.type == "error" else None)
    page.on("pageerror", lambda e: errors.append(str(e)))
    # Nothing fetched: the page is one file.
    page.on(
        "request", lambda r: None if r.url.startswith(("file:", "data:")) else errors.append(r.url)
    )
    page.goto(report.as_uri(), wait_until="load")
    widths = page.eval_on_selector_all("img", "imgs => imgs.map(i => i.complete && i.naturalWidth)")
    page.screenshot(path=str(shots / "report.png"), full_page=True)
    assert errors == []
    assert len(widths) >= 4 and all(w and w > 0 for w in widths), widths
    assert page.locator("#leaderboard tbody tr").count() >= 1
    # Table 2 whole at 1,280 px: the page does not scroll sideways, Overall's n is in view.
    assert page.evaluate("document.documentElement.scrollWidth") <= 1280
    overall_n = page.locator("#leaderboard thead tr").nth(1).locator("th").last.bounding_box()
    assert overall_n and overall_n["x"] + overall_n["width"] <= 1280
    # The drill-down, as a reader clicks it: a leaderboard number, then a sample.
    page.locator("#leaderboard tbody a").first.click()
    page.wait_for_load_state("load")
    assert "/cells/" in page.url and page.locator("#cell tbody tr").count() >= 1
    page.screenshot(path=str(shots / "report-cell.png"), full_page=True)
    page.locator("#cell tbody a").first.click()
    page.wait_for_load_state("load")
    assert "/samples/" in page.url and "#single-4000" in page.url
    answers = page.locator("[id='answers-single-4000'] tbody tr")
    assert answers.count() >= 1 and answers.first.is_visible()
    assert page.locator(".summary").first.inner_text().strip()
    page.screenshot(path=str(shots / "report-sample.png"), full_page=False)
    assert errors == []


def test_the_pipeline_run_page_shows_each_artifact_once(ui, prefect_env, new_page, shots, tmp_path):
    """The run an operator opens, the pipeline's own, holds the results, each key once.
    Its vectors are a loopback server's bag of words: which artifacts there are does not
    depend on them."""
    demo = [Path(sys.executable).parent / "lilo", "demo", "--methods", "single"]
    small = ["--target-words", "1000", "--set", "samples.target_samples=1"]  # all it needs
    with LLMServer() as embeddings:
        done = subprocess.run(
            [*demo, *small, "--data-dir", str(tmp_path / "data")],
            cwd=REPO, env={**prefect_env, **embeddings.embedding_env()},
            capture_output=True, text=True, timeout=900,
        )  # fmt: skip
    assert done.returncode == 0, done.stdout[-2000:] + done.stderr[-2000:]
    (run,) = httpx.post(
        f"{prefect_env['PREFECT_API_URL']}/flow_runs/filter",
        json={"flows": {"name": {"any_": ["lilo-pipeline"]}}},
        timeout=30,
    ).json()
    page = new_page(viewport={"width": 1400, "height": 1500})
    page.goto(f"{ui}/runs/flow-run/{run['id']}", wait_until="networkidle", timeout=120_000)
    page.get_by_text("Artifacts", exact=True).first.click()
    page.get_by_text("run-summary", exact=True).wait_for(timeout=60_000)
    lines = page.locator("body").inner_text().splitlines()
    page.screenshot(path=str(shots / "pipeline-run-artifacts.png"), full_page=True)
    wanted = ["run-record", "run-summary", "leaderboard", "results", "position-curve",
              "position-curve-plot", "cost", "failures", "qa-quality-v1", "dataset-v1-stats",
              "dataset-v1-surveys"]  # fmt: skip
    assert {key: lines.count(key) for key in wanted} == dict.fromkeys(wanted, 1)
