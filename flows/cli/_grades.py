"""`lilo review grades-export|grades-import|grades-ui|agreement`: reviewers grade a random
sample of the judge's QA grades, in a JSONL file or in Prefect UI forms (the grade-review
flow in flows/grade_review.py), both recorded in `fct_grade_reviews`; lilo reports agreement
and weighted kappa per judge and dataset version (tasks/qa/grade_review.py). Registered by
`lilo review` (flows/cli/review.py)."""

from __future__ import annotations

import argparse
import getpass
import json
import sys
from pathlib import Path
from typing import Any

from lilo.flows.cli._errors import CLIError
from lilo.flows.cli._prefect import running_flows
from lilo.flows.cli._review_settings import review_settings
from lilo.flows.cli._warehouse import require_warehouse

__all__ = ["register_grades"]


def _items(settings: Any) -> list[dict[str, Any]]:
    from lilo.flows._stage import open_warehouse
    from lilo.flows.grade_review import judged_items

    require_warehouse(settings)
    with open_warehouse(settings) as wh:
        return judged_items(wh, settings.dataset_version)


def cmd_grades_export(args: argparse.Namespace) -> int:
    from lilo.tasks.qa.grade_review import sample_grades

    settings = review_settings(args)
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

    from lilo.flows.grade_review import record_grades
    from lilo.tasks.printable import printable
    from lilo.tasks.qa.grade_review import GradeVerdict

    path = Path(args.file)
    if not path.is_file():
        raise CLIError(f"{path}: no such file: give the JSONL file `grades-export` wrote")
    settings = review_settings(args)
    verdicts, bad = [], []
    for n, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
        if not line.strip():
            continue
        try:
            verdicts.append((f"{path}:{n}", GradeVerdict.model_validate_json(line)))
        except ValidationError as exc:
            problems = "; ".join(
                f"{'.'.join(map(str, e['loc'])) or 'line'}: {e['msg']}" for e in exc.errors()
            )
            bad.append(f"{path}:{n}: {problems}")
    reviewer = getattr(args, "reviewer", None) or getpass.getuser()
    recorded, unknown = record_grades(settings, verdicts, reviewer)
    for problem in [*bad, *unknown]:
        print(f"skipped {printable(problem, one_line=True)}", file=sys.stderr)
    print(f"recorded {recorded} human grade{'' if recorded == 1 else 's'} by {reviewer}")
    return 1 if bad or unknown else 0


def cmd_grades_ui(args: argparse.Namespace) -> int:
    from lilo.flows.cli._forms import print_address, print_wait, require_api
    from lilo.flows.grade_review import grade_review
    from lilo.tasks.config_loading import flow_parameters

    require_api()
    settings = review_settings(args)
    print_wait("lilo review grades-ui", settings.qa.review_timeout_s)
    with running_flows(args.debug):
        flow = grade_review.with_options(on_running=[print_address])
        totals = flow(
            n=args.n,
            seed=args.seed,
            reviewer=getattr(args, "reviewer", None),
            overrides=flow_parameters(settings),
        )
    for problem in totals["problems"]:
        print(f"not recorded: {problem}", file=sys.stderr)
    print(
        f"{totals['grades']} human grades recorded in {totals['batches']} forms"
        + ("; the last form timed out" if totals["timed_out"] else "")
        + "; `lilo review agreement` compares them with the judge"
    )
    return 1 if totals["problems"] else 0


def cmd_agreement(args: argparse.Namespace) -> int:
    from lilo.flows._stage import open_warehouse
    from lilo.tasks.qa.grade_review import agreement
    from lilo.warehouse.queries.grades import grade_reviews

    settings = review_settings(args)
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
    """The judge-agreement actions under `lilo review` (`action(name, *takes, **kwargs)`
    adds a sub-parser with the options every review action takes, and of --reviewer and
    --sample those in `takes`)."""
    export = action("grades-export", help="write a random sample of the judge's QA grades")
    export.add_argument("file", metavar="FILE", help="the JSONL file to write")
    _sample_args(export)
    export.set_defaults(func=cmd_grades_export)

    imported = action(
        "grades-import", "reviewer", help="record the human grades of a reviewed file"
    )
    imported.add_argument(
        "file", metavar="FILE", help="the JSONL file `grades-export` wrote, graded"
    )
    imported.set_defaults(func=cmd_grades_import)

    ui = action(
        "grades-ui",
        "reviewer",
        help="start the grade-review flow: the same sample of judge grades as forms in the "
        "Prefect UI",
        description="Needs a Prefect server (PREFECT_API_URL): prints where the forms wait. "
        "--reviewer fills the form's name in.",
    )
    _sample_args(ui)
    ui.set_defaults(func=cmd_grades_ui)

    agree = action("agreement", help="exact agreement and weighted kappa, humans vs judge")
    agree.set_defaults(func=cmd_agreement)


def _sample_args(p: Any) -> None:
    p.add_argument("--n", type=int, default=50, metavar="N", help="how many grades (default 50)")
    p.add_argument("--seed", type=int, default=0, metavar="N", help="the sample's seed (default 0)")
