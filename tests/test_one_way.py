"""One way for each thing: backoff is `tasks/backoff.py`'s (no other doubling wait in lilo),
a token count is one of the two in `tasks/tokens.py` (no ad-hoc `len(text) // 4`), every
exception lilo defines is a `LiloError` (tasks/errors.py: `lilo` prints it, redacted, with
its exit code), Prefect's artifact API is called in `flows/_artifacts.py` alone, a
stage's units run through `run_units` (flows/_units.py: threads or Dask, the results' order
kept), lilo's pages share one Jinja environment and one style (templates from outside lilo:
the sandbox in tasks/prompt_packs/pack.py), a figure becomes PNG and a `data:` URI one way, a
Markdown table is `pipe_table`'s (cells escaped) and a progress bar is flows/_bar.py's."""

from __future__ import annotations

import importlib
import inspect
import pkgutil
import re
from pathlib import Path

from lilo.tasks.backoff import BAD_REPLY, WAREHOUSE_LOCK, Backoff
from lilo.tasks.errors import LiloError
from lilo.tasks.formatting import pipe_table
from lilo.tasks.tokens import count_word_tokens

ROOT = Path(__file__).resolve().parent.parent
SOURCES = [p for d in ("flows", "tasks", "warehouse") for p in sorted((ROOT / d).rglob("*.py"))]


def _written(pattern: str, *, besides: str) -> list[str]:
    found = []
    for path in SOURCES:
        name = str(path.relative_to(ROOT))
        if name != besides and re.search(pattern, path.read_text(encoding="utf-8")):
            found.append(name)
    return found


def test_backoff_doubles_up_to_its_cap():
    assert [WAREHOUSE_LOCK.wait_s(n) for n in range(7)] == [0.05, 0.1, 0.2, 0.4, 0.8, 1.6, 2.0]
    assert [BAD_REPLY.wait_s(n) for n in range(6)] == [0.5, 1.0, 2.0, 4.0, 8.0, 8.0]
    assert Backoff(first_s=2.0).wait_s(4) == 32.0  # arXiv's: no cap


def test_no_other_doubling_wait_nor_token_guess():
    doubling = r"\*\s*\(?\s*(2(\.0)?\s*\*\*|1\s*<<)\s*\w"  # x * 2**n, x * (1 << n)
    assert _written(doubling, besides="tasks/backoff.py") == []
    assert _written(r"\)\s*//\s*4\b", besides="") == []


def test_word_tokens_are_words_and_marks():
    assert count_word_tokens("GPT-4o's limit: 128k tokens.") == 10


def test_every_exception_lilo_defines_is_a_lilo_error():
    """BaseExceptions that are no Exception (a signal's `Interrupted`) are not errors."""
    found = []
    for package in ("lilo.flows", "lilo.tasks", "lilo.warehouse"):
        path = importlib.import_module(package).__path__
        for info in pkgutil.walk_packages(path, f"{package}."):
            module = importlib.import_module(info.name)
            for name, cls in vars(module).items():
                if (
                    inspect.isclass(cls)
                    and cls.__module__ == info.name
                    and issubclass(cls, Exception)
                    and not issubclass(cls, LiloError)
                ):
                    found.append(f"{info.name}.{name}")
    assert found == []


def test_prefect_artifacts_are_made_in_one_module():
    assert _written(r"prefect\.artifacts|Artifact\(\s*key=", besides="flows/_artifacts.py") == []


def test_a_stage_s_units_run_one_way():
    dask = r"kind\s*==\s*[\"']dask|prefect_dask|\bas_completed\b|\bBatch\("
    assert _written(dask, besides="flows/_units.py") == []


def test_pages_share_one_environment_and_prompts_stay_in_the_sandbox():
    assert _written(r"\bEnvironment\(", besides="tasks/results_report/_html.py") == []
    assert _written(r"SandboxedEnvironment\(", besides="tasks/prompt_packs/pack.py") == []
    pages = sorted(str(p.relative_to(ROOT)) for p in (ROOT / "tasks").rglob("*.html*"))
    assert pages and all(p.startswith("tasks/results_report/templates/") for p in pages), pages
    assert all(p.endswith(".html.j2") for p in pages), pages
    assert all("<style>" not in (ROOT / p).read_text() for p in pages if "base" not in p)


def test_a_figure_becomes_png_and_a_data_uri_one_way():
    assert _written(r"matplotlib\.use|\.savefig\(", besides="tasks/results_report/_plots.py") == []
    assert _written(r"data:image/png;base64,\"", besides="tasks/results_report/_html.py") == []


def test_markdown_tables_are_written_one_way_and_escaped():
    assert _written(r"[\"']\|\s*-{3}", besides="tasks/formatting.py") == []
    table = pipe_table(["survey", "title", "samples"], [["s1", "A | B\nC", 3]], right_from=2)
    assert table.splitlines() == [
        "| survey | title | samples |",
        "|---|---|---:|",
        "| s1 | A \\| B C | 3 |",
    ]


def test_one_progress_bar():
    assert _written(r"\bProgress\(|\btrack\(|tqdm", besides="flows/_bar.py") == []
