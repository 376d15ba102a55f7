"""`lilo review`: QA pairs checked by people in a terminal (DESIGN §6).

`lilo review` walks pending pairs one by one and records each decision at once (quit any
time; the next session starts where this one stopped). `list|approve|reject|edit` do the
same without prompts, `export|import` carry pairs to reviewers without access as JSONL,
`ui` starts the review flow whose forms wait in the Prefect UI, and `report` prints the
dataset version's QA quality report.
"""

from __future__ import annotations

import argparse
import functools
import getpass
import json
import sys
from pathlib import Path
from typing import Any

from flows.cli._common import add_settings_args, settings_from_args

__all__ = ["register"]


def _pairs(args: argparse.Namespace, statuses: tuple[str, ...]) -> list[Any]:
    from flows._stage import open_warehouse
    from flows.review import reviewable_pairs

    settings = settings_from_args(args)
    with open_warehouse(settings) as wh:
        return reviewable_pairs(wh, settings.dataset_version, statuses, args.sample)


def _record(args: argparse.Namespace, verdicts: list[Any], channel: str = "cli") -> int:
    """Write verdicts; print what was recorded and what was not. 1 if anything failed."""
    from flows.review import record_verdicts

    decisions, problems = record_verdicts(
        settings_from_args(args), verdicts, args.reviewer, channel
    )
    for d in decisions:
        print(f"{d.action:8} {d.qa_id} (sample {d.sample_id}) by {d.reviewer}")
    for problem in problems:
        print(f"not recorded: {problem}", file=sys.stderr)
    print(f"{len(decisions)} decisions recorded, {len(problems)} not recorded")
    return 1 if problems else 0


def cmd_list(args: argparse.Namespace) -> int:
    from rich.console import Console
    from rich.table import Table

    pairs = _pairs(args, tuple(args.status.split(",")))
    table = Table(title=f"{len(pairs)} QA pairs ({args.status})")
    for column in ("qa_id", "sample", "kind", "status", "question"):
        table.add_column(column, overflow="fold")
    for p in pairs:
        table.add_row(p.qa_id, p.sample_id, p.kind, p.status, p.question)
    Console().print(table)
    return 0


def cmd_approve(args: argparse.Namespace) -> int:
    from tasks.qa import Verdict

    if not args.qa_ids and not args.sample:
        print("name the pairs to approve (QA_ID ...) or a sample (--sample S)", file=sys.stderr)
        return 2
    ids = args.qa_ids or [p.qa_id for p in _pairs(args, ("pending",))]
    return _record(args, [Verdict(qa_id=i, decision="approve") for i in ids])


def cmd_reject(args: argparse.Namespace) -> int:
    from tasks.qa import Verdict

    return _record(
        args, [Verdict(qa_id=i, decision="reject", reason=args.reason) for i in args.qa_ids]
    )


def cmd_edit(args: argparse.Namespace) -> int:
    from tasks.qa import Verdict

    verdict = Verdict(
        qa_id=args.qa_id,
        decision="edit",
        question=args.question,
        answer=args.answer,
        reason=args.reason,
    )
    return _record(args, [verdict])


def cmd_export(args: argparse.Namespace) -> int:
    from tasks.qa import export_record

    pairs = _pairs(args, tuple(args.status.split(",")))
    with Path(args.file).open("w", encoding="utf-8") as out:
        for pair in pairs:
            out.write(json.dumps(export_record(pair), ensure_ascii=False) + "\n")
    print(
        f'wrote {len(pairs)} pairs to {args.file}: set each line\'s "decision" to approve, '
        'reject (with a "reason") or edit (change "question"/"answer"), then '
        f"`lilo review import {args.file} --reviewer NAME`"
    )
    return 0


def cmd_import(args: argparse.Namespace) -> int:
    from pydantic import ValidationError

    from tasks.qa import FileVerdict

    verdicts, bad = [], []
    for n, line in enumerate(Path(args.file).read_text(encoding="utf-8").splitlines(), 1):
        if not line.strip():
            continue
        try:
            verdicts.append(FileVerdict.model_validate_json(line))
        except ValidationError as exc:
            errors = "; ".join(
                f"{'.'.join(map(str, e['loc'])) or 'line'}: {e['msg']}" for e in exc.errors()
            )
            bad.append(f"{args.file}:{n}: {errors}")
    for problem in bad:
        print(f"skipped {problem}", file=sys.stderr)
    status = _record(args, verdicts, channel="file")
    return 1 if bad else status


def cmd_interactive(args: argparse.Namespace) -> int:
    from rich.console import Console
    from rich.markup import escape
    from rich.panel import Panel
    from rich.prompt import Prompt

    from tasks.qa import Verdict

    console = Console()
    pairs = _pairs(args, ("pending",))
    if not pairs:
        console.print("no QA pairs wait for review")
        return 0
    console.print(f"{len(pairs)} pairs wait; each decision is saved as you make it.")
    done = 0
    for i, p in enumerate(pairs, 1):
        evidence = escape("\n".join(f"[{e['paper_id']}] {e['quote']}" for e in p.evidence))
        console.print(
            Panel(
                f"[bold]Q:[/bold] {escape(p.question)}\n[bold]A:[/bold] {escape(p.answer)}"
                f"\n\n[dim]{evidence}[/dim]",
                title=f"{i}/{len(pairs)} · {p.kind} · sample {p.sample_id} · {p.qa_id}",
            )
        )
        choice = Prompt.ask(
            "[a]pprove, [r]eject, [e]dit, [s]kip, [q]uit", choices=list("aresq"), default="s"
        )
        if choice == "q":
            break
        if choice == "s":
            continue
        verdict = Verdict(qa_id=p.qa_id, decision="approve")
        if choice == "r":
            verdict = Verdict(qa_id=p.qa_id, decision="reject", reason=Prompt.ask("reason"))
        elif choice == "e":
            verdict = Verdict(
                qa_id=p.qa_id,
                decision="edit",
                question=Prompt.ask("question", default=p.question),
                answer=Prompt.ask("answer", default=p.answer),
            )
        if _record(args, [verdict]) == 0:
            done += 1
    console.print(f"{done} decisions recorded this session.")
    return 0


def cmd_report(args: argparse.Namespace) -> int:
    from flows._load import load_qa, load_samples
    from flows._stage import open_warehouse
    from flows.review import load_decisions
    from tasks.qa import quality_report
    from tasks.synthetic import load_manifest

    settings = settings_from_args(args)
    corpus = Path(args.corpus) if args.corpus else settings.data_dir / "demo-corpus"
    facts = load_manifest(corpus).facts if (corpus / "manifest.json").exists() else ()
    with open_warehouse(settings) as wh:
        report = quality_report(
            load_samples(wh, settings.dataset_version),
            load_qa(wh, settings.dataset_version),
            load_decisions(wh, settings.dataset_version),
            settings,
            facts,
        )
    print(json.dumps(report.as_dict(), indent=2, ensure_ascii=False))
    return 0


def cmd_ui(args: argparse.Namespace) -> int:
    from prefect.settings import get_current_settings

    from flows.review import qa_review

    if not get_current_settings().api.url:
        print(
            "No Prefect API is configured: the form would live on a temporary server no "
            "browser can reach. Run `prefect server start`, then "
            "`prefect config set PREFECT_API_URL=http://127.0.0.1:4200/api`, and try again.",
            file=sys.stderr,
        )
        return 2
    settings = settings_from_args(args)
    print("review the pending pairs in the Prefect UI: the qa-review run waits for its form")
    totals = qa_review(sample=args.sample, overrides=settings.flow_parameters())
    print(f"{totals['decisions']} decisions recorded in {totals['batches']} forms")
    return 0


def register(sub: Any) -> None:
    review = sub.add_parser(
        "review",
        help="review QA pairs: interactively, one by one, or via JSONL files",
        description="Without a sub-command: walk the pending pairs one by one.",
    )
    _common_args(review, top=True)
    review.set_defaults(func=cmd_interactive)
    subparsers = review.add_subparsers(dest="action", metavar="ACTION")
    # Options may come before or after the action: the action's parser only sets what it
    # was given, so it never overwrites a value parsed before it with a default.
    action = functools.partial(subparsers.add_parser, argument_default=argparse.SUPPRESS)

    listing = action("list", help="list pairs (pending by default)")
    _common_args(listing, status="pending")
    listing.set_defaults(func=cmd_list)

    approve = action("approve", help="approve pairs, or a sample's pending pairs")
    _common_args(approve)
    approve.add_argument("qa_ids", nargs="*", default=[], metavar="QA_ID")
    approve.set_defaults(func=cmd_approve)

    reject = action("reject", help="reject pairs, with a reason")
    _common_args(reject)
    reject.add_argument("qa_ids", nargs="+", metavar="QA_ID")
    reject.add_argument("--reason", required=True)
    reject.set_defaults(func=cmd_reject)

    edit = action("edit", help="edit and approve a pair (the original is kept)")
    _common_args(edit)
    edit.add_argument("qa_id", metavar="QA_ID")
    edit.add_argument("--question", default=None)
    edit.add_argument("--answer", default=None)
    edit.add_argument("--reason", default="")
    edit.set_defaults(func=cmd_edit)

    export = action("export", help="write pairs to a JSONL file for reviewers")
    _common_args(export, status="pending")
    export.add_argument("file")
    export.set_defaults(func=cmd_export)

    imported = action("import", help="record the decisions in a JSONL file")
    _common_args(imported)
    imported.add_argument("file")
    imported.set_defaults(func=cmd_import)

    ui = action("ui", help="start the qa-review flow: a form per batch in the Prefect UI")
    _common_args(ui)
    ui.set_defaults(func=cmd_ui)

    report = action("report", help="the QA quality report (JSON)")
    _common_args(report)
    report.add_argument(
        "--corpus", default=None, help="synthetic corpus folder, for planted-fact coverage"
    )
    report.set_defaults(func=cmd_report)


def _common_args(p: argparse.ArgumentParser, status: str | None = None, top: bool = False) -> None:
    add_settings_args(p)
    p.add_argument("--sample", help="only this sample's pairs")
    p.add_argument(
        "--reviewer",
        default=getpass.getuser() if top else argparse.SUPPRESS,
        help="who decides (default: your user name)",
    )
    if status:
        p.add_argument("--status", default=status, help="comma-separated statuses to include")
