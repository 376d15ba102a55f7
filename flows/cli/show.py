"""`lilo show`: a sample's summaries in the default result version, down to every answer:
the summary, each QA pair with the answer given from it and the judge's grade and reason,
and the checklist's grades (the report's per-sample pages hold the same)."""

from __future__ import annotations

import argparse
from typing import Any

from lilo.flows.cli._common import CLIError, add_common_args, published_results, settings_from_args

__all__ = ["register"]


def cmd_show(args: argparse.Namespace) -> int:
    from rich.console import Console
    from rich.markup import escape
    from rich.panel import Panel
    from rich.table import Table

    from lilo.warehouse.queries.details import read_details, version_samples
    from lilo.warehouse.queries.results import default_version

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
        details = read_details(con, version, matches[0], args.method, args.words)
    if not details:
        raise CLIError(
            f"sample {matches[0]} has no summary in result version {version} for "
            f"method {args.method or 'any'} at {args.words or 'any'} words",
            code=1,
        )
    console = Console()
    for d in details:
        console.print(
            Panel(
                escape(d.text),
                title=escape(
                    f"{d.method}, {d.target_words} words · sample {d.sample_id} · "
                    f"result version {version}"
                ),
                subtitle=escape(
                    f"{d.words} words written · S_l {_num(d.scores['length'])} · "
                    f"S_c {_num(d.scores['consistency'])} · S_q {_num(d.scores['quality'])}"
                ),
            )
        )
        for n, a in enumerate(d.answers, 1):
            console.print(
                f"[bold]Q{n}[/bold] ({escape(a.kind)}, position {a.position}) "
                f"{escape(a.question)}\n  gold:  {escape(a.gold)}\n  given: {escape(a.given)}"
                f"\n  grade {_num(a.grade)}: {escape(a.reason)}",
                soft_wrap=False,
            )
        checklist = Table(title="checklist grades (x100)", title_justify="left")
        checklist.add_column("aspect")
        checklist.add_column("grade", justify="right")
        for aspect, grade in d.checklist.items():
            checklist.add_row(escape(aspect), _num(grade))
        console.print(checklist)
    return 0


def _num(value: float | None) -> str:
    return "-" if value is None else f"{value:.2f}".rstrip("0").rstrip(".")


def register(sub: Any) -> None:
    show = sub.add_parser(
        "show",
        help="a sample's summaries down to every answer: text, QA grades, checklist",
        description="Prints, for the default result version (the leaderboard's), each "
        "summary of SAMPLE: its text, each QA pair with the gold answer, the answer given "
        "from the summary and the judge's grade and reason, and the checklist's grades.",
    )
    show.add_argument("sample", metavar="SAMPLE", help="a sample id or a unique prefix")
    show.add_argument("--method", help="only this method or variant, e.g. ral_writer")
    show.add_argument("--words", type=int, help="only this target length, e.g. 4000")
    add_common_args(show)
    show.set_defaults(func=cmd_show)
