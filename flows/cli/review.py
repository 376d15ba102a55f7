"""`lilo review`: QA pairs checked by people in a terminal (docs/design.md §6).

`lilo review` walks pending pairs one by one and records each decision at once (quit any
time; the next session starts where this one stopped). `list|approve|reject|edit` do the
same without prompts, `export|import` carry pairs to reviewers without access as JSONL,
`ui` starts the review flow whose forms wait in the Prefect UI, and `report` prints the
dataset version's QA quality report. The judge's QA grades are reviewed by the `grades-*`
actions (flows/cli/_grades.py).
"""

from __future__ import annotations

import argparse
import functools
import getpass
import json
import os
import sys
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from lilo.flows._bar import progress
from lilo.flows.cli._args import add_common_args
from lilo.flows.cli._errors import CLIError
from lilo.flows.cli._prefect import running_flows
from lilo.flows.cli._review_settings import review_settings
from lilo.flows.cli._stop import stoppable
from lilo.tasks.text import counted

__all__ = ["register"]

# Ids are shown cut to a unique prefix of at least this many characters, as git shows
# commits, and any unique prefix is taken back: a table of them fits 80 columns.
_SHORT = 7
# tasks.qa.QA_STATUSES, spelled out here so that parsing options loads nothing.
_QA_STATUSES = ("pending", "approved", "rejected", "filtered", "duplicate", "invalid")


def _reviewer(args: argparse.Namespace) -> str:
    """Who decides: --reviewer, else the user's name."""
    return getattr(args, "reviewer", None) or getpass.getuser()


def _known(settings: Any) -> tuple[list[str], list[str]]:
    """The dataset version's sample ids and QA pair ids."""
    from lilo.flows._stage import open_warehouse
    from lilo.warehouse.queries.reviews import review_ids

    with open_warehouse(settings) as wh:
        return review_ids(wh, settings.dataset_version)


def _resolve(given: list[str], known: list[str], what: str, settings: Any) -> list[str]:
    """Each id given, whole or as a unique prefix; any unknown or ambiguous one is a
    CLIError naming it, before anything is written."""
    found, unknown = [], []
    for g in given:
        matches = [k for k in known if k == g] or [k for k in known if k.startswith(g)]
        if len(matches) > 1:
            raise CLIError(
                f"{what} {g} is ambiguous: it starts {', '.join(matches[:3])}...; "
                "give more characters"
            )
        if matches:
            found.append(matches[0])
        else:
            unknown.append(g)
    if unknown:
        raise CLIError(
            f"no {what} {', '.join(unknown)} in dataset {settings.dataset_version} "
            f"({settings.db_path}): `lilo review list --status pending,approved,rejected` "
            "shows the ids"
        )
    return found


def _sample(args: argparse.Namespace, settings: Any) -> str | None:
    """The --sample given, resolved to its full id."""
    if not getattr(args, "sample", None):
        return None
    return _resolve([args.sample], _known(settings)[0], "sample", settings)[0]


def _short(ids: list[str]) -> dict[str, str]:
    """Each id cut to its shortest prefix of at least _SHORT characters that no other id
    shares (neighbours in sorted order share the longest prefixes)."""
    ordered = sorted(set(ids))
    short = {}
    for i, full in enumerate(ordered):
        neighbours = ordered[max(i - 1, 0) : i] + ordered[i + 1 : i + 2]
        shared = max((len(os.path.commonprefix([full, n])) for n in neighbours), default=0)
        short[full] = full[: max(_SHORT, shared + 1)]
    return short


def _pairs(args: argparse.Namespace, settings: Any, statuses: tuple[str, ...]) -> list[Any]:
    from lilo.flows._stage import open_warehouse
    from lilo.flows.qa_review import reviewable_pairs

    sample = _sample(args, settings)
    with open_warehouse(settings) as wh:
        return reviewable_pairs(wh, settings.dataset_version, statuses, sample)


def _record(
    args: argparse.Namespace, settings: Any, verdicts: list[Any], channel: str = "cli"
) -> int:
    """Write verdicts; print what became of each: recorded, already so, or not recorded and
    why (a conflict names the decision it contradicts). 1 if any was not recorded."""
    from lilo.flows.qa_review import record_verdicts
    from lilo.tasks.printable import printable

    applied = record_verdicts(settings, verdicts, _reviewer(args), channel)
    for d in applied.decisions:
        line = f"{d.action:8} {d.qa_id} (sample {d.sample_id}) by {d.reviewer}"
        print(printable(line, one_line=True))
    for unchanged in applied.unchanged:
        print(f"unchanged: {printable(unchanged, one_line=True)}")
    for problem in applied.problems:
        print(f"not recorded: {printable(problem, one_line=True)}", file=sys.stderr)
    print(
        f"{counted(len(applied.decisions), 'decision')} recorded, {len(applied.problems)} not "
        "recorded" + (f", {len(applied.unchanged)} already so" if applied.unchanged else "")
    )
    return 1 if applied.problems else 0


def _qa_ids(settings: Any, given: list[str]) -> list[str]:
    return _resolve(given, _known(settings)[1], "QA pair", settings)


def cmd_list(args: argparse.Namespace) -> int:
    from rich.console import Console
    from rich.table import Table

    from lilo.tasks.printable import printable

    settings = review_settings(args)
    pairs = _pairs(args, settings, tuple(args.status.split(",")))
    samples, qa_ids = _known(settings)
    short = {**_short(samples), **_short(qa_ids)}
    table = Table(title=f"{counted(len(pairs), 'QA pair')} ({args.status})")
    for column in ("qa_id", "sample", "kind", "status"):
        table.add_column(column, no_wrap=True)
    table.add_column("question", overflow="fold", ratio=1)
    for p in pairs:  # the question as a model wrote it, from a paper
        question = printable(p.question, one_line=True, markup=True)
        table.add_row(short[p.qa_id], short[p.sample_id], p.kind, p.status, question)
    Console().print(table)
    return 0


def _replacing(args: argparse.Namespace) -> datetime | None:
    """With --replace, the pairs count as seen as they stand now, so a decision another
    person recorded before is replaced, not a conflict."""
    return datetime.now(UTC).replace(tzinfo=None) if args.replace else None


@stoppable
def cmd_approve(args: argparse.Namespace) -> int:
    from lilo.tasks.qa import Verdict

    if not args.qa_ids and not getattr(args, "sample", None):
        raise CLIError("name the pairs to approve (QA_ID ...) or a sample (--sample S)")
    settings = review_settings(args)
    if args.qa_ids:
        ids = _qa_ids(settings, args.qa_ids)
    else:
        ids = [p.qa_id for p in _pairs(args, settings, ("pending",))]
    shown = _replacing(args)
    return _record(
        args, settings, [Verdict(qa_id=i, decision="approve", shown_at=shown) for i in ids]
    )


@stoppable
def cmd_reject(args: argparse.Namespace) -> int:
    from lilo.tasks.qa import Verdict

    settings = review_settings(args)
    verdicts = [
        Verdict(qa_id=i, decision="reject", reason=args.reason, shown_at=_replacing(args))
        for i in _qa_ids(settings, args.qa_ids)
    ]
    return _record(args, settings, verdicts)


@stoppable
def cmd_edit(args: argparse.Namespace) -> int:
    from lilo.tasks.qa import Verdict

    settings = review_settings(args)
    verdict = Verdict(
        qa_id=_qa_ids(settings, [args.qa_id])[0],
        decision="edit",
        question=args.question,
        answer=args.answer,
        reason=args.reason,
        shown_at=_replacing(args),
    )
    return _record(args, settings, [verdict])


def cmd_export(args: argparse.Namespace) -> int:
    from lilo.tasks.qa import export_record

    settings = review_settings(args)
    pairs = _pairs(args, settings, tuple(args.status.split(",")))
    with Path(args.file).open("w", encoding="utf-8") as out:
        for pair in progress(pairs, "exporting"):
            out.write(json.dumps(export_record(pair), ensure_ascii=False) + "\n")
    print(
        f"wrote {counted(len(pairs), 'pair')} to {args.file}: "
        'set each line\'s "decision" to approve, reject (with a "reason") or edit (change '
        '"question"/"answer"), then '
        f"`lilo review import {args.file} --reviewer NAME`"
    )
    return 0


# An exported pair is a few KB: 100 MB is tens of thousands of pairs, far past any review.
_MAX_REVIEW_FILE_BYTES = 100_000_000


@stoppable
def cmd_import(args: argparse.Namespace) -> int:
    """Each line is a verdict by `--reviewer`, made now: a line's own `reviewer` and
    `decided_at` are ignored (and said so). A line that cannot be read (not UTF-8, not a
    verdict) is skipped with its file:line; the others are recorded."""
    from pydantic import ValidationError

    from lilo.tasks.files import FileTooLarge, read_bounded
    from lilo.tasks.printable import printable
    from lilo.tasks.qa import FileVerdict

    path = Path(args.file)
    hint = "give the JSONL file `lilo review export` wrote"
    try:
        data = read_bounded(path, _MAX_REVIEW_FILE_BYTES)
    except FileNotFoundError as exc:
        raise CLIError(f"{path}: no such file: {hint}") from exc
    except FileTooLarge as exc:
        raise CLIError(f"{exc}: {hint}") from exc
    settings = review_settings(args)
    verdicts, bad, ignored = [], [], []
    lines = data.splitlines()
    for n, raw in progress(list(enumerate(lines, 1)), "reading"):
        if not raw.strip():
            continue
        try:
            verdict = FileVerdict.model_validate_json(raw.decode("utf-8"))
        except UnicodeDecodeError as exc:
            bad.append(f"{args.file}:{n}: not UTF-8 text (byte {exc.start + 1})")
            continue
        except ValidationError as exc:
            errors = "; ".join(
                f"{'.'.join(map(str, e['loc'])) or 'line'}: {e['msg']}" for e in exc.errors()
            )
            bad.append(f"{args.file}:{n}: {errors}")
            continue
        if args.replace:
            verdict = verdict.model_copy(update={"shown_at": _replacing(args)})
        verdicts.append(verdict)
        if verdict.reviewer is not None or verdict.decided_at is not None:
            ignored.append(f"{args.file}:{n}")
    for problem in bad:  # quotes the file
        print(f"skipped {printable(problem, one_line=True)}", file=sys.stderr)
    if ignored:
        more = f" and {len(ignored) - 3} more lines" if len(ignored) > 3 else ""
        print(
            f"ignored the reviewer or decided_at given in {', '.join(ignored[:3])}{more}: "
            f"every decision is recorded as {_reviewer(args)}'s, made now",
            file=sys.stderr,
        )
    status = _record(args, settings, verdicts, channel="file")
    return 1 if bad else status


@stoppable
def cmd_interactive(args: argparse.Namespace) -> int:
    from rich.console import Console
    from rich.markup import escape
    from rich.panel import Panel
    from rich.prompt import Prompt

    from lilo.flows._stage import open_warehouse
    from lilo.flows.qa_review import paper_titles
    from lilo.tasks.printable import printable
    from lilo.tasks.qa import Verdict

    console = Console()
    settings = review_settings(args)
    pairs = _pairs(args, settings, ("pending",))
    if not pairs:
        console.print(f"no QA pairs wait for review in dataset {settings.dataset_version}")
        return 0
    with open_warehouse(settings) as wh:
        titles = paper_titles(wh, pairs)
    console.print(
        f"{counted(len(pairs), 'pair')} wait{'s' if len(pairs) == 1 else ''}; each decision is "
        "saved as you make it."
    )
    done = 0
    for i, p in enumerate(pairs, 1):
        # Questions, answers, quotes and titles come from papers and a model.
        evidence = printable(
            "\n".join(
                f'"{titles.get(e["paper_id"]) or "untitled"}" ({e["paper_id"]}): {e["quote"]}'
                for e in p.evidence
            ),
            markup=True,
        )
        shown = datetime.now(UTC).replace(tzinfo=None)
        console.print(
            Panel(
                f"[bold]Q:[/bold] {printable(p.question, markup=True)}\n"
                f"[bold]A:[/bold] {printable(p.answer, markup=True)}\n\n[dim]{evidence}[/dim]",
                title=printable(
                    f"{i}/{len(pairs)} · {p.kind} · sample {p.sample_id} · {p.qa_id}",
                    one_line=True,
                    markup=True,
                ),
            )
        )
        # Escaped: rich reads an unescaped "[a]" as markup and drops it.
        choice = Prompt.ask(
            escape("[a]pprove, [r]eject, [e]dit, [s]kip, [q]uit"),
            choices=list("aresq"),
            default="s",
        )
        if choice == "q":
            break
        if choice == "s":
            continue
        verdict = Verdict(qa_id=p.qa_id, decision="approve", shown_at=shown)
        if choice == "r":
            verdict = Verdict(
                qa_id=p.qa_id, decision="reject", reason=Prompt.ask("reason"), shown_at=shown
            )
        elif choice == "e":
            # The prompt shows no default (it would print the text raw): empty keeps it.
            question = Prompt.ask("question (empty: keep it)", default="", show_default=False)
            answer = Prompt.ask("answer (empty: keep it)", default="", show_default=False)
            verdict = Verdict(
                qa_id=p.qa_id,
                decision="edit",
                question=question or p.question,
                answer=answer or p.answer,
                shown_at=shown,
            )
        if _record(args, settings, [verdict]) == 0:
            done += 1
    console.print(f"{counted(done, 'decision')} recorded this session.")
    return 0


def cmd_report(args: argparse.Namespace) -> int:
    from lilo.flows._load import load_qa, load_samples
    from lilo.flows._stage import open_warehouse
    from lilo.tasks.printable import printable
    from lilo.tasks.qa import quality_report
    from lilo.tasks.synthetic import load_manifest
    from lilo.warehouse.queries.reviews import load_decisions

    settings = review_settings(args)
    corpus = Path(args.corpus) if args.corpus else settings.data_dir / "demo-corpus"
    facts = load_manifest(corpus).facts if (corpus / "manifest.json").exists() else ()
    with open_warehouse(settings) as wh:
        report = quality_report(
            load_samples(wh, settings.dataset_version),
            load_qa(wh, settings.dataset_version),
            load_decisions(wh, settings.dataset_version),
            settings.dataset_version,
            settings.qa,
            facts,
        )
    print(printable(json.dumps(report.as_dict(), indent=2, ensure_ascii=False)))
    return 0


@stoppable
def cmd_ui(args: argparse.Namespace) -> int:
    from lilo.flows.cli._forms import print_address, print_wait, require_api
    from lilo.flows.qa_review import qa_review
    from lilo.tasks.config_loading import flow_parameters
    from lilo.tasks.printable import printable

    require_api()
    settings = review_settings(args)
    sample = _sample(args, settings)
    print_wait("lilo review ui", settings.qa.review_timeout_s)
    with running_flows(args.debug):
        flow = qa_review.with_options(on_running=[print_address])
        totals = flow(
            sample=sample,
            reviewer=getattr(args, "reviewer", None),
            overrides=flow_parameters(settings),
        )
    for line in totals["unchanged"]:
        print(f"unchanged: {printable(line, one_line=True)}")
    for problem in totals["problems"]:
        print(f"not recorded: {printable(problem, one_line=True)}", file=sys.stderr)
    print(
        f"{counted(totals['decisions'], 'decision')} recorded in "
        f"{counted(totals['batches'], 'form')}, "
        f"{len(totals['problems'])} not recorded, {len(totals['unchanged'])} already so"
        + ("; the last form timed out, its pairs stay pending" if totals["timed_out"] else "")
    )
    return 1 if totals["problems"] else 0


def register(sub: Any) -> None:
    review = sub.add_parser(
        "review",
        help="review QA pairs: interactively, one by one, or via JSONL files",
        description="Without an action: walk the dataset version's pending pairs one by one "
        "in the terminal, each decision saved as you make it (quit any time; the next session "
        "starts where this one stopped). The actions decide without prompts, carry pairs to "
        "reviewers as JSONL, or put them in Prefect UI forms; the grades-* actions and "
        "agreement check the judge's QA grades against people's.",
    )
    _common_args(review, "reviewer", "sample", top=True)
    review.set_defaults(func=cmd_interactive, action=None, takes=("reviewer", "sample"))
    subparsers = review.add_subparsers(dest="action", metavar="ACTION")
    # Options may come before or after the action: the action's parser only sets what it
    # was given, so it never overwrites a value parsed before it with a default.
    make = functools.partial(subparsers.add_parser, argument_default=argparse.SUPPRESS)

    def action(name: str, *takes: str, **kwargs: Any) -> argparse.ArgumentParser:
        """An action's parser, with the options every action takes and `takes` of
        --reviewer and --sample (given before the action, the others are refused)."""
        kwargs.setdefault("description", kwargs.get("help"))  # shown by the action's --help
        parser = make(name, **kwargs)
        parser.set_defaults(takes=takes)
        _common_args(parser, *takes)
        return parser

    listing = action("list", "sample", help="list pairs (pending by default)")
    _status_arg(listing, "pending")
    listing.set_defaults(func=cmd_list)

    approve = action(
        "approve", "reviewer", "sample", help="approve pairs, or a sample's pending pairs"
    )
    approve.add_argument(
        "qa_ids", nargs="*", default=[], metavar="QA_ID", help="pairs to approve (or --sample)"
    )
    approve.set_defaults(func=cmd_approve)
    _replace_arg(approve)

    reject = action("reject", "reviewer", help="reject pairs, with a reason")
    reject.add_argument("qa_ids", nargs="+", metavar="QA_ID", help="pairs to reject")
    reject.add_argument(
        "--reason", required=True, help="why, recorded with the decision (e.g. 'ambiguous')"
    )
    reject.set_defaults(func=cmd_reject)
    _replace_arg(reject)

    edit = action("edit", "reviewer", help="edit and approve a pair (the original is kept)")
    edit.add_argument("qa_id", metavar="QA_ID", help="the pair to edit")
    edit.add_argument("--question", default=None, help="the new question (default: as it is)")
    edit.add_argument("--answer", default=None, help="the new answer (default: as it is)")
    edit.add_argument("--reason", default="", help="why it was edited (optional)")
    edit.set_defaults(func=cmd_edit)
    _replace_arg(edit)

    export = action("export", "sample", help="write pairs to a JSONL file for reviewers")
    _status_arg(export, "pending")
    export.add_argument("file", metavar="FILE", help="the JSONL file to write")
    export.set_defaults(func=cmd_export)

    imported = action(
        "import", "reviewer", help="record the decisions in a JSONL file (`export` wrote it)"
    )
    imported.add_argument("file", metavar="FILE", help="the JSONL file, its decisions filled in")
    imported.set_defaults(func=cmd_import)
    _replace_arg(imported)

    ui = action(
        "ui",
        "reviewer",
        "sample",
        help="start the qa-review flow: a form per batch in the Prefect UI",
        description="Needs a Prefect server (PREFECT_API_URL): prints where the forms wait. "
        "--reviewer fills the form's name in.",
    )
    ui.set_defaults(func=cmd_ui)

    report = action("report", help="the QA quality report (JSON)")
    report.add_argument(
        "--corpus",
        default=None,
        metavar="DIR",
        help="synthetic corpus folder, for planted-fact coverage (default: DATA_DIR/demo-corpus)",
    )
    report.set_defaults(func=cmd_report)

    from lilo.flows.cli._grades import register_grades

    register_grades(action)


def _common_args(p: argparse.ArgumentParser, *takes: str, top: bool = False) -> None:
    """What every review command takes (where the data is, which dataset version), and of
    --reviewer and --sample those in `takes`."""
    add_common_args(p)
    p.add_argument(
        "--dataset",
        metavar="NAME",
        default=argparse.SUPPRESS,
        help="the dataset version whose pairs to review (default: the setting dataset_version; "
        "`lilo datasets` lists them)",
    )
    if "sample" in takes:
        p.add_argument(
            "--sample",
            default=argparse.SUPPRESS,
            help="only this sample's pairs (its id or a unique prefix)",
        )
    if "reviewer" in takes:
        p.add_argument(
            "--reviewer",
            type=_reviewer_name,
            default=argparse.SUPPRESS,
            help="who decides, recorded with each decision (default: your user name)",
        )


def _replace_arg(p: argparse.ArgumentParser) -> None:
    p.add_argument(
        "--replace",
        action="store_true",
        default=False,
        help="record the decision over another reviewer's (without it, that is a conflict: "
        "not recorded, and said)",
    )


def _reviewer_name(value: str) -> str:
    """A reviewer's name; one holding a line break or a control character (it would print a
    line of its own wherever the decision is shown) is a usage error (exit 2)."""
    from lilo.tasks.printable import printable
    from lilo.tasks.qa import reviewer_problem

    if printable(value, one_line=True) != value:
        raise argparse.ArgumentTypeError(reviewer_problem(value))
    return value


def _status_arg(p: argparse.ArgumentParser, default: str) -> None:
    p.add_argument(
        "--status",
        type=_statuses,
        default=default,
        help=f"comma-separated statuses to include, of: {', '.join(_QA_STATUSES)} "
        f"(default: {default})",
    )


def _statuses(value: str) -> str:
    """A comma-separated list of QA pair statuses; anything else is a usage error (exit 2)."""
    given = [v.strip() for v in value.split(",") if v.strip()]
    unknown = [v for v in given if v not in _QA_STATUSES]
    if unknown or not given:
        raise argparse.ArgumentTypeError(
            f"unknown status {', '.join(unknown) or repr(value)}: use "
            f"{', '.join(_QA_STATUSES)} (comma-separated)"
        )
    return ",".join(given)
