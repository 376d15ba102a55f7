"""`lilo show`: a sample's summaries in the default result version. Without `--method` or
`--target-words`, one line per summary (method, length, words, S_l, S_c, S_q, questions
asked); with them, each chosen summary down to every answer: the summary, each QA pair with
the answer given from it and the judge's grade and reason, and the checklist's grades (the
report's per-sample pages hold the same)."""

from __future__ import annotations

import argparse
from typing import Any

from lilo.flows.cli._args import add_common_args, add_old_name
from lilo.flows.cli._errors import CLIError
from lilo.flows.cli._settings import settings_from_args
from lilo.flows.cli._warehouse import published_results

__all__ = ["register"]


def cmd_show(args: argparse.Namespace) -> int:
    from rich.console import Console

    from lilo.tasks.scoring import leaderboard_scores
    from lilo.warehouse.queries.details import read_details, version_samples
    from lilo.warehouse.queries.results import default_version

    headlines = [h.name for h in leaderboard_scores()]
    with published_results(settings_from_args(args)) as con:
        version = default_version(con)  # the version the `leaderboard` view shows
        if version is None:
            raise CLIError("no result version yet: run the pipeline until summaries are scored", 1)
        samples = version_samples(con, version)
        matches = [s for s in samples if s == args.sample] or [
            s for s in samples if s.startswith(args.sample)
        ]
        if len(matches) != 1:
            how = "is ambiguous in" if matches else "has no summaries in"
            raise CLIError(
                f"sample {args.sample} {how} result version {version}; its samples: "
                f"{', '.join(samples[:5])}{', ...' if len(samples) > 5 else ''}"
            )
        words = args.length
        details = read_details(con, version, matches[0], args.method, words, headlines=headlines)
    if not details:
        raise CLIError(
            f"sample {matches[0]} has no summary in result version {version} for "
            f"method {args.method or 'any'} at {words or 'any'} words",
            code=1,
        )
    console = Console()
    if args.method is None and words is None:
        _overview(console, details, version)
    else:
        for d in details:
            _summary(console, d, version)
    return 0


def _overview(console: Any, details: list[Any], version: int) -> None:
    """One line per summary, and how to see one whole."""
    from rich.table import Table

    from lilo.tasks.printable import printable
    from lilo.tasks.scoring import leaderboard_scores

    headlines = leaderboard_scores()
    sample = details[0].sample_id
    table = Table(
        title=printable(f"Sample {sample}: {len(details)} summaries, result version {version}")
    )
    labels = [h.label for h in headlines]
    for column in ("method", "length", "words", *labels, "questions"):
        table.add_column(column, justify="left" if column == "method" else "right")
    for d in details:
        table.add_row(
            printable(d.method, one_line=True, markup=True),
            str(d.target_words),
            str(d.words),
            *(_num(d.scores.get(h.name)) for h in headlines),
            str(len(d.answers)),
        )
    console.print(table)
    example = details[0]
    console.print(
        "Each summary down to every answer: "
        + printable(
            f"lilo show {sample} --method {example.method} --target-words {example.target_words}",
            one_line=True,
        )
        + " (either option alone: all lengths, or all methods)",
        markup=False,
        soft_wrap=True,
    )


def _summary(console: Any, d: Any, version: int) -> None:
    """One summary: its text, each answer given from it and graded, the checklist."""
    from rich.panel import Panel
    from rich.table import Table

    from lilo.tasks.printable import printable
    from lilo.tasks.scoring import leaderboard_scores

    def safe(text: str) -> str:  # written by a model, or quoting a paper
        return printable(text, markup=True)

    console.print(
        Panel(
            safe(d.text),
            title=safe(
                f"{d.method}, {d.target_words} words · sample {d.sample_id} · "
                f"result version {version}"
            ),
            subtitle=safe(
                " · ".join(
                    [f"{d.words} words written"]
                    + [f"{h.label} {_num(d.scores.get(h.name))}" for h in leaderboard_scores()]
                )
            ),
        )
    )
    for n, a in enumerate(d.answers, 1):
        where = "cross-paper" if a.position is None else f"{a.kind}, paper {a.position}"
        console.print(
            f"[bold]Q{n}[/bold] ({safe(where)}) {safe(a.question)}\n  gold:  {safe(a.gold)}"
            f"\n  given: {safe(a.given)}\n  grade {_num(a.grade)}: {safe(a.reason)}",
            soft_wrap=False,
        )
    checklist = Table(title="checklist grades (x100)", title_justify="left")
    checklist.add_column("aspect")
    checklist.add_column("grade", justify="right")
    for aspect, grade in d.checklist.items():
        checklist.add_row(printable(aspect, one_line=True, markup=True), _num(grade))
    console.print(checklist)


def _num(value: float | None) -> str:
    return "-" if value is None else f"{value:.2f}".rstrip("0").rstrip(".")


def register(sub: Any) -> None:
    show = sub.add_parser(
        "show",
        help="a sample's summaries: one line each, or down to every answer",
        description="For the default result version (the leaderboard's): without --method "
        "or --target-words, one line per summary of SAMPLE (method, length, words written, S_l, "
        "S_c, S_q, questions asked); with them, each chosen summary whole: its text, each QA "
        "pair with the gold answer, the answer given from the summary and the judge's grade "
        "and reason, and the checklist's grades. Text from papers and models is printed with "
        "control characters shown as \\uXXXX.",
    )
    show.add_argument("sample", metavar="SAMPLE", help="a sample id or a unique prefix")
    show.add_argument("--method", help="only this method or variant, e.g. ral_writer")
    show.add_argument(
        "--target-words",
        dest="length",
        type=int,
        metavar="N",
        help="only this target length, e.g. 4000",
    )
    add_old_name(show, "--words", "--target-words", dest="length", type=int)
    add_common_args(show)
    show.set_defaults(func=cmd_show)
