"""`lilo review grades-export|grades-import|agreement`: reviewers grade a random sample of the
judge's QA grades; lilo reports agreement and weighted kappa per judge and dataset version
(tasks/qa/grade_review.py). Registered by `lilo review` (flows/cli/review.py)."""

from __future__ import annotations

import argparse
import json
import sys
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from flows.cli._common import CLIError, add_common_args, require_warehouse, settings_from_args

__all__ = ["register_grades"]


def _items(settings: Any) -> list[dict[str, Any]]:
    from flows._stage import open_warehouse
    from tasks.qa.grade_review import grade_items
    from warehouse.queries.datasets import qa_answers
    from warehouse.queries.grades import judged_consistency

    require_warehouse(settings)
    with open_warehouse(settings) as wh:
        rows = judged_consistency(wh, settings.dataset_version)
        gold = qa_answers(wh, settings.dataset_version)
    return grade_items(rows, gold)


def cmd_grades_export(args: argparse.Namespace) -> int:
    from tasks.qa.grade_review import sample_grades

    settings = settings_from_args(args)
    items = sample_grades(_items(settings), args.n, args.seed)
    if not items:
        raise CLIError(
            f"no judged questions in dataset version {settings.dataset_version}: score some "
            "summaries first (`lilo run`)",
            code=1,
        )
    with Path(args.file).open("w", encoding="utf-8") as out:
        for item in items:
            out.write(json.dumps(item, ensure_ascii=False) + "\n")
    print(
        f'wrote {len(items)} judge grades to {args.file}: set each line\'s "human_grade" to '
        f"0, 0.25, 0.5, 0.75 or 1, then `lilo review grades-import {args.file} --reviewer NAME`"
    )
    return 0


def cmd_grades_import(args: argparse.Namespace) -> int:
    from pydantic import ValidationError

    from flows._stage import open_warehouse
    from tasks.qa.grade_review import GradeVerdict

    path = Path(args.file)
    if not path.is_file():
        raise CLIError(f"{path}: no such file: give the JSONL file `grades-export` wrote")
    settings = settings_from_args(args)
    judged = {(i["generation_id"], i["qa_id"]): i for i in _items(settings)}
    rows, bad = [], []
    now = datetime.now(UTC).replace(tzinfo=None)
    for n, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
        if not line.strip():
            continue
        try:
            verdict = GradeVerdict.model_validate_json(line)
        except ValidationError as exc:
            problems = "; ".join(
                f"{'.'.join(map(str, e['loc'])) or 'line'}: {e['msg']}" for e in exc.errors()
            )
            bad.append(f"{path}:{n}: {problems}")
            continue
        item = judged.get((verdict.generation_id, verdict.qa_id))
        if item is None:
            bad.append(f"{path}:{n}: no judge grade for this generation and question here")
            continue
        rows.append(
            {
                "generation_id": item["generation_id"],
                "qa_id": item["qa_id"],
                "dataset_version": item["dataset_version"],
                "judge": item["judge"],
                "judge_grade": item["judge_grade"],  # the warehouse's, not the file's
                "human_grade": verdict.human_grade,
                "reviewer": args.reviewer,
                "reviewed_at": now,
            }
        )
    for problem in bad:
        print(f"skipped {problem}", file=sys.stderr)
    with open_warehouse(settings) as wh:
        added = wh.upsert(
            "fct_grade_reviews", rows, ("generation_id", "qa_id", "reviewer"), update=True
        )
    print(f"recorded {len(rows)} human grades ({added} new) by {args.reviewer}")
    return 1 if bad else 0


def cmd_agreement(args: argparse.Namespace) -> int:
    from flows._stage import open_warehouse
    from tasks.qa.grade_review import agreement
    from warehouse.queries.grades import grade_reviews

    settings = settings_from_args(args)
    require_warehouse(settings)
    with open_warehouse(settings) as wh:
        rows = grade_reviews(wh)
    if not rows:
        raise CLIError("no human grades yet: `lilo review grades-export FILE` first", code=1)
    print("judge\tdataset_version\tn\texact_agreement\tweighted_kappa")
    for r in agreement(rows):
        print(
            f"{r['judge']}\t{r['dataset_version']}\t{r['n']}\t{r['exact_agreement']:.4f}\t"
            f"{r['weighted_kappa']:.4f}"
        )
    return 0


def register_grades(action: Any) -> None:
    """The judge-agreement actions under `lilo review` (`action` adds a sub-parser)."""
    export = action("grades-export", help="write a random sample of the judge's QA grades")
    add_common_args(export)
    export.add_argument("file")
    export.add_argument("--n", type=int, default=50, help="how many grades (default 50)")
    export.add_argument("--seed", type=int, default=0, help="the sample's seed (default 0)")
    export.set_defaults(func=cmd_grades_export)

    imported = action("grades-import", help="record the human grades of a reviewed file")
    add_common_args(imported)
    imported.add_argument("file")
    imported.add_argument("--reviewer", required=True)
    imported.set_defaults(func=cmd_grades_import)

    agree = action("agreement", help="exact agreement and weighted kappa, humans vs judge")
    add_common_args(agree)
    agree.set_defaults(func=cmd_agreement)
