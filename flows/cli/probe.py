"""`lilo probe TASK`: the Lost-in-the-Middle probes (each registered task,
tasks/probes/kinds/) on the configured backbone (docs/design.md §17). The authors' published
probe data comes in with `lilo import lost-in-the-middle CLONE` (flows/importers/)."""

from __future__ import annotations

import argparse
from functools import reduce
from typing import Any, Literal, get_args, get_origin

from lilo.flows.cli._args import add_common_args
from lilo.flows.cli._local_model import add_local_model_arg, served
from lilo.flows.cli._prefect import running_flows, start_prefect_early
from lilo.flows.cli._settings import settings_from_args
from lilo.tasks.config import field_at
from lilo.tasks.config_loading import Select
from lilo.tasks.probes.kinds.base import Flag

__all__ = ["register"]


def _numbers(value: str) -> list[int]:
    try:
        numbers = [int(v) for v in value.split(",") if v.strip()]
    except ValueError:
        numbers = []
    if not numbers or any(n < 0 for n in numbers):
        raise argparse.ArgumentTypeError(
            f"{value!r} is not comma-separated whole numbers, e.g. 0,24,49,74"
        )
    return numbers


def cmd_probe(args: argparse.Namespace) -> int:
    from lilo.flows.probe import probe_flow

    given = [
        (_probe_setting(key.removeprefix("probe.")), value)
        for key, value in vars(args).items()
        if key.startswith("probe.") and value is not None
    ]
    settings = settings_from_args(args, *given)
    if args.dry_run:
        return _dry_run(args, settings)
    start_prefect_early(settings)
    from lilo.flows._units import elsewhere

    at_once = elsewhere(settings.runner)  # units in other processes: started at once
    with (
        served(args.local_model, settings.data_dir, settings.llm.api, at_once=at_once) as model,
        running_flows(args.debug),
    ):
        result = probe_flow(args.task, settings.with_overrides(model))
    _print_probe(result)
    return 1 if result.failed == result.units else 0


def _dry_run(args: argparse.Namespace, settings: Any) -> int:
    """`--dry-run`: the probe's calls and cost planned and printed; nothing sent or written
    (flows/dry_run.py). A local model is not started: the plan sends nothing."""
    from lilo.flows.dry_run import format_plan, plan_probe

    with served(args.local_model, settings.data_dir, settings.llm.api) as model:
        plan = plan_probe(args.task, settings.with_overrides(model))
    print("\n".join(format_plan(plan.as_dict())))
    return 0


def _print_probe(result: Any) -> None:
    from rich.console import Console
    from rich.markup import escape
    from rich.table import Table

    from lilo.tasks.printable import printable

    console = Console(width=max(Console().width, 100))
    aware = {r["query_aware"] for r in result.curve}
    table = Table(
        title=f"{result.task} probe on {escape(result.backbone)} (prompts: {result.prompts}"
        f"{', query-aware' if True in aware else ''}); probe result version {result.version}",
        caption="accuracy [95% interval], the authors' metric, over n replies; echo: the share "
        "of them that echo the prompt; non-echo: the accuracy of the others, over their n (its "
        "interval: probe_curve); *: most correct replies are echoes; position 0-based, or the "
        "baseline",
    )
    for column in ("variant", "size", "position", "accuracy", "n", "echo", "non-echo", "n"):
        table.add_column(column, justify="left" if column in ("variant", "position") else "right")
    for r in sorted(
        result.curve,
        key=lambda r: (
            r["variant"],
            r["size"],
            r["setting"] != "position",
            r["setting"],
            r["position"] if r["position"] is not None else -1,
        ),
    ):
        accuracy = (
            "-"
            if r["accuracy"] is None
            else (f"{r['accuracy']:.3f} [{r['ci_low']:.2f}, {r['ci_high']:.2f}]")
        )
        table.add_row(
            escape(r["variant"]),
            str(r["size"]),
            r["setting"] if r["position"] is None else str(r["position"]),
            accuracy + ("*" if r["echo_carried"] else ""),
            str(r["n"]),
            "-" if r["echo_rate"] is None else f"{r['echo_rate']:.2f}",
            "-" if r["non_echo_accuracy"] is None else f"{r['non_echo_accuracy']:.3f}",
            "-" if r["non_echo_n"] is None else str(r["non_echo_n"]),
        )
    console.print(table)
    for note in result.notes:
        console.print(f"note: {printable(note, one_line=True)}", markup=False, soft_wrap=True)
    console.print(
        f"{result.units} answers ({result.failed} failed): {result.llm_made} LLM calls made, "
        f"{result.llm_cached} served from cache; {result.rows_added} rows added."
    )
    if result.partial:
        console.print(
            f"probe result version {result.version} is partial: it holds failed answers; "
            "`lilo failures` lists them and the same command retries them"
        )
    if result.report_path:
        console.print(f"Report: {result.report_path}", markup=False, soft_wrap=True)
    console.print(
        "Views: probe_curve, probe_summary (U depth), probe_vs_summary (in the published copy)"
    )


# The options of every probe task, beside the task's own (its sizes, sources, flags).
_COMMON = (
    Flag("positions", "--positions", "0-based gold positions (default: the paper's per size)"),
    Flag("examples", "--examples", "examples per size (default 100)"),
    Flag(
        "query_aware",
        "--query-aware",
        "the query-aware prompt: the key or question also before the data",
    ),
)


def _probe_setting(name: str) -> Select:
    """The `probe` setting `name`, a task's own too (`needle.notes`: probe.needle.notes)."""
    return lambda s: reduce(getattr, name.split("."), s.probe)


def _add_setting(parser: Any, flag: Flag, choices: tuple[str, ...] = ()) -> None:
    """`flag` as an option setting `probe.<setting>`, typed as the setting is declared."""
    declared = field_at(f"probe.{flag.setting}")
    assert declared, f"probe.{flag.setting}"  # probe_task refuses a flag naming no setting
    annotation = declared.annotation
    options: dict[str, Any] = {"dest": f"probe.{flag.setting}", "help": flag.help}
    if annotation is bool:
        options["action"] = argparse.BooleanOptionalAction
    elif get_origin(annotation) is Literal:
        options["choices"] = choices or get_args(annotation)
    else:
        options["type"] = _numbers if get_origin(annotation) is tuple else annotation
        options["metavar"] = flag.flag.lstrip("-").upper()
    parser.add_argument(flag.flag, **options)


def register(sub: Any) -> None:
    from lilo.tasks.probes import available_probe_tasks, get_probe_task

    probe = sub.add_parser(
        "probe",
        help="Lost-in-the-Middle probes: "
        + ", ".join(get_probe_task(t).title for t in available_probe_tasks()),
        description="Ask the configured backbone every item with the gold item at each "
        "position (the paper's positions by default), through the same LLM client, cache "
        "and ledger as the summaries. Results: the probe_curve, probe_summary and "
        "probe_vs_summary views, and a report page per probe result version.",
    )
    kinds = probe.add_subparsers(dest="task", required=True, metavar="PROBE")
    for name in available_probe_tasks():
        task = get_probe_task(name)
        p = kinds.add_parser(
            name,
            help=task.title,
            description="Sizes, positions and examples default to the `probe` settings.",
        )
        _add_setting(p, task.sizes)
        for flag in _COMMON:
            _add_setting(p, flag)
        source = "the data: auto takes the imported published files when there are any, "
        _add_setting(p, Flag("source", "--source", source + task.source_help), task.sources)
        for flag in task.flags:
            _add_setting(p, flag)
        add_local_model_arg(p, "asks it")
        p.add_argument(
            "--dry-run",
            action="store_true",
            help="plan the probe and print what it would send (calls per probe set, the "
            "cache's share, input tokens, output tokens at their budgets, the cost range at "
            "llm.prices); no model is called and the warehouse is not written",
        )
        add_common_args(p)
        p.set_defaults(func=cmd_probe)
