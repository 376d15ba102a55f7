"""Validate cleaned papers with the Great Expectations suite in `expectations/papers.json`
(docs/design.md §11).

A failed expectation quarantines the offending papers, named by the expectation, and never
stops the run. GX is imported inside `validate_papers`: the import alone costs about 3 s.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from lilo.expectations import SUITES_DIR
from lilo.tasks.config import CleanSettings
from lilo.tasks.records import PaperText, Quarantine

if TYPE_CHECKING:
    import pandas as pd

__all__ = ["Validation", "markup_density", "papers_frame", "validate_papers"]

SUITE_FILE = SUITES_DIR / "papers.json"
# Control sequences (`\name`, `\\`, `\%`) and the characters that only markup uses.
_MARKUP = re.compile(r"\\(?:[A-Za-z@]+\*?|.)|[{}$&^_]", re.S)
_KEY_COLUMN = "paper_id"
_DOCS_SITE = "lilo"


@dataclass(frozen=True)
class Validation:
    passed: list[str]  # paper ids
    quarantine: list[Quarantine]  # one per failing paper, stage "validate"
    summary: dict[str, Any]  # JSON-serialisable: kept in the run's record


def markup_density(text: str) -> float:
    """Share of the characters that belong to LaTeX markup. Real cleaned papers in the test
    corpus sit between 0.07 and 0.24; a paper that is mostly markup is not worth summarising."""
    if not text:
        return 0.0
    return sum(len(m) for m in _MARKUP.findall(text)) / len(text)


def papers_frame(papers: list[PaperText]) -> pd.DataFrame:
    """The columns the suite checks, plus `markup_density` computed here."""
    import pandas as pd

    rows = [
        {
            "paper_id": p.paper_id,
            "title": p.title,
            "text": p.text,
            "words": p.words,
            "tokens": p.tokens,
            "content_sha256": p.content_sha256,
            "cleaner_version": p.cleaner_version,
            "markup_density": markup_density(p.text),
        }
        for p in papers
    ]
    return pd.DataFrame(rows)


def validate_papers(
    papers: list[PaperText],
    limits: CleanSettings,
    docs_dir: Path | None = None,
    earlier: Mapping[str, str] | None = None,
) -> Validation:
    """Run the papers suite; papers failing any expectation are quarantined, the rest pass.
    With `docs_dir`, GX data docs for the run are built there (`index.html`).

    Duplicated `content_sha256` quarantines every copy but the first: the text itself is fine.
    `earlier` maps the content hashes of papers already kept (on earlier runs) to their ids:
    a paper repeating one of them is a copy too.
    """
    ids = [p.paper_id for p in papers]
    if not papers:
        return Validation([], [], {"suite": "papers", "success": True, "papers": 0})
    parameters = {
        "min_words": limits.min_words,
        "max_words": limits.max_words,
        "max_markup_density": limits.max_markup_density,
    }
    results = _run_suite(papers_frame(papers), parameters, docs_dir)

    failures: dict[str, list[tuple[str, str]]] = {}
    expectations = []
    for result in results:
        config = result.expectation_config
        column = config.kwargs.get("column", "")
        name = f"{config.type}:{column}"
        unexpected = result.result.get("unexpected_index_list") or []
        args = _describe(config.kwargs)
        success = bool(result.success)
        count = int(result.result.get("unexpected_count") or 0)
        if config.type == "expect_column_values_to_be_unique":
            unexpected = _all_but_first(unexpected, column)
            copies = _copies_of_earlier(papers, earlier or {})
            for paper_id, kept in copies.items():
                failures.setdefault(paper_id, []).append((name, f"same as {kept}, kept before"))
            success, count = success and not copies, count + len(copies)
        for row in unexpected:
            failures.setdefault(row[_KEY_COLUMN], []).append((name, args))
        entry = {"expectation": name, "args": args, "success": success, "unexpected_count": count}
        if result.exception_info.get("raised_exception"):
            entry["error"] = str(result.exception_info.get("exception_message"))
        expectations.append(entry)

    quarantine = [
        Quarantine(
            paper_id,
            stage="validate",
            reason=reasons[0][0],
            detail="; ".join(f"{name} {args}".strip() for name, args in reasons),
        )
        for paper_id, reasons in failures.items()
    ]
    summary = {
        "suite": "papers",
        "parameters": parameters,
        "success": all(e["success"] for e in expectations),
        "papers": len(ids),
        "passed": len(ids) - len(failures),
        "quarantined": len(failures),
        "expectations": expectations,
    }
    if docs_dir is not None:
        summary["data_docs"] = str(docs_dir / "index.html")
    passed = [i for i in ids if i not in failures]
    return Validation(passed=passed, quarantine=quarantine, summary=summary)


def _run_suite(frame: pd.DataFrame, parameters: dict[str, Any], docs_dir: Path | None) -> list[Any]:
    """An ephemeral GX context (in-memory stores, no analytics, no progress bars) over
    `frame`, run as a checkpoint so that its data docs are built into `docs_dir` if given."""
    import great_expectations as gx
    from great_expectations.data_context.types.base import (
        DataContextConfig,
        InMemoryStoreBackendDefaults,
        ProgressBarsConfig,
    )

    sites = {}
    if docs_dir is not None:
        sites[_DOCS_SITE] = {
            "class_name": "SiteBuilder",
            "show_how_to_buttons": False,
            "store_backend": {
                "class_name": "TupleFilesystemStoreBackend",
                "base_directory": str(docs_dir.resolve()),  # GX wants it absolute
            },
            "site_index_builder": {"class_name": "DefaultSiteIndexBuilder"},
        }
    config = DataContextConfig(
        analytics_enabled=False,
        progress_bars=ProgressBarsConfig(globally=False, metric_calculations=False),
        store_backend_defaults=InMemoryStoreBackendDefaults(),
        data_docs_sites=sites,
    )
    context = gx.get_context(mode="ephemeral", project_config=config)
    batch = context.data_sources.add_pandas("papers").add_dataframe_asset("papers")
    suite = context.suites.add(gx.ExpectationSuite(**json.loads(SUITE_FILE.read_text())))
    definition = context.validation_definitions.add(
        gx.ValidationDefinition(
            data=batch.add_batch_definition_whole_dataframe("all"), suite=suite, name="papers"
        )
    )
    actions: list[gx.checkpoint.ValidationAction] = (
        [gx.checkpoint.UpdateDataDocsAction(name="data-docs")] if sites else []
    )
    checkpoint = context.checkpoints.add(
        gx.Checkpoint(
            name="papers",
            validation_definitions=[definition],
            actions=actions,
            result_format={
                "result_format": "COMPLETE",
                "unexpected_index_column_names": [_KEY_COLUMN],
            },
        )
    )
    result = checkpoint.run(
        batch_parameters={"dataframe": frame}, expectation_parameters=parameters
    )
    return [r for run in result.run_results.values() for r in run.results]


def _copies_of_earlier(papers: list[PaperText], earlier: Mapping[str, str]) -> dict[str, str]:
    """Paper id -> id of the paper kept before with the same content (never itself)."""
    return {
        p.paper_id: earlier[p.content_sha256]
        for p in papers
        if earlier.get(p.content_sha256, p.paper_id) != p.paper_id
    }


def _all_but_first(rows: list[dict[str, Any]], column: str) -> list[dict[str, Any]]:
    seen: set[Any] = set()
    later = []
    for row in rows:
        if row[column] in seen:
            later.append(row)
        seen.add(row[column])
    return later


def _describe(kwargs: dict[str, Any]) -> str:
    """The expectation's own arguments, e.g. `regex=\\\\appendix` or `min_value=2000`."""
    shown = {k: v for k, v in kwargs.items() if k not in {"column", "batch_id"}}
    return " ".join(f"{k}={v}" for k, v in shown.items())
