"""What the command modules share: settings options, running the pipeline, printing results."""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any

from tasks.config import Settings, load_settings

__all__ = [
    "add_settings_args",
    "print_leaderboard",
    "print_summary",
    "run_pipeline_flow",
    "settings_from_args",
]

_QUERY_HINT = (
    'python -c "import duckdb; '
    "print(duckdb.connect('{path}', read_only=True).sql('SELECT * FROM leaderboard'))\""
)


def add_settings_args(p: argparse.ArgumentParser) -> None:
    p.add_argument("--config", help="TOML settings file")
    p.add_argument("--data-dir", help="where the warehouse, archives and caches live")
    p.add_argument("--review", choices=("auto", "manual"), help="QA review mode")
    p.add_argument("--target-words", help="comma-separated target lengths, e.g. 4000,8000,16000")
    p.add_argument("--methods", help="comma-separated methods, e.g. single,ral_writer")
    p.add_argument(
        "--set", action="append", metavar="KEY=VALUE", help="any setting, e.g. llm.model=gpt-4o"
    )


def _parse_list(value: str | None, cast: type = str) -> list[Any] | None:
    return [cast(v.strip()) for v in value.split(",") if v.strip()] if value else None


def settings_from_args(args: argparse.Namespace, **extra: Any) -> Settings:
    """Defaults < TOML file < LILO_* environment < command-line options."""
    found: dict[str, Any] = {}
    if args.data_dir:
        found["data_dir"] = args.data_dir
    if args.review:
        found["qa.review"] = args.review
    if target := _parse_list(args.target_words, int):
        found["generate.target_words"] = target
    if methods := _parse_list(args.methods):
        found["generate.methods"] = methods
    for item in args.set or []:
        key, _, value = item.partition("=")
        found[key.strip()] = value.strip()
    return load_settings(Path(args.config) if args.config else None, {**found, **extra})


def run_pipeline_flow(settings: Settings, dataset: bool = False) -> dict[str, Any]:
    """Run the pipeline flow (or, with `dataset`, the run on an existing dataset version)
    with heartbeats off (fine for one-off runs, DESIGN §13)."""
    from prefect.settings import PREFECT_FLOWS_HEARTBEAT_FREQUENCY, temporary_settings

    from flows.pipeline import lilo_pipeline, lilo_run_dataset

    with temporary_settings(updates={PREFECT_FLOWS_HEARTBEAT_FREQUENCY: None}):
        if dataset:
            return lilo_run_dataset(settings.dataset_version, overrides=settings.flow_parameters())
        return lilo_pipeline(overrides=settings.flow_parameters())


def print_leaderboard(published: Path) -> bool:
    """The latest leaderboard as the paper's Table 2: a row per method variant (and backbone,
    when there are several), S_l/S_c/S_q and n scored/expected per length, the judge in the
    title; a partial version says so. False when nothing is published yet."""
    import duckdb
    from rich.console import Console
    from rich.markup import escape
    from rich.table import Table

    console = Console(width=max(Console().width, 110))
    if not published.exists():
        console.print(
            f"no published results yet at {published}: runs publish once summaries are scored"
        )
        return False
    con = duckdb.connect(str(published), read_only=True)
    try:
        version, partial = con.execute(
            "SELECT version, partial FROM res_versions ORDER BY version DESC LIMIT 1"
        ).fetchall()[0]
        rows = con.execute(
            "SELECT variant, target_words, backbone, judge, scored, expected, s_l, s_c, s_q "
            "FROM leaderboard"
        ).fetchall()
    finally:
        con.close()
    lengths = sorted({r[1] for r in rows})
    backbones = sorted({r[2] for r in rows})
    judges = sorted({j for r in rows if r[3] for j in r[3].split(", ")})
    table = Table(
        title=f"Leaderboard, result version {version}{' (PARTIAL)' if partial else ''}: "
        f"{', '.join(backbones)}; judge {', '.join(judges) or '-'}; x100",
        caption="S_l length, S_c consistency, S_q quality: means over the scored summaries; "
        "n: scored/expected",
    )
    table.add_column("method", no_wrap=True)
    if len(backbones) > 1:
        table.add_column("backbone", no_wrap=True)
    for n in lengths:
        label = f"{n // 1000}k" if n >= 1000 else str(n)
        for score in ("S_l", "S_c", "S_q", "n"):
            table.add_column(f"{label} {score}", justify="right")
    cells: dict[tuple[str, str], dict[int, tuple[str, ...]]] = {}
    for variant, n, backbone, _, scored, expected, *scores in rows:
        shown = tuple("-" if v is None else f"{v:.1f}" for v in scores)
        cells.setdefault((variant, backbone), {})[n] = (*shown, f"{scored}/{expected}")
    for (variant, backbone), by_length in cells.items():
        values = [by_length.get(n, ("-", "-", "-", "-")) for n in lengths]
        names = tuple(
            escape(n) for n in ((variant, backbone) if len(backbones) > 1 else (variant,))
        )
        table.add_row(*names, *(v for quad in values for v in quad))
    console.print(table)
    if partial:
        console.print(
            "This result version is PARTIAL: some expected summaries failed or are unscored; "
            "`lilo failures` lists them with their reasons.",
            markup=False,
        )
    return True


def print_summary(result: dict[str, Any], seconds: float) -> None:
    from rich.console import Console
    from rich.table import Table

    console = Console()
    stages = Table(title=f"Run {result['run_id']} ({result['status']}, {seconds:.1f} s)")
    for column in ("stage", "seconds", "LLM calls made", "served from cache", "rows added"):
        stages.add_column(column, justify="left" if column == "stage" else "right")
    for s in result["stages"]:
        stages.add_row(
            s["stage"],
            f"{s['seconds']:.1f}",
            str(s["llm_made"]),
            str(s["llm_cached"]),
            str(sum(s["rows_added"].values())),
        )
    console.print(stages)
    print_leaderboard(Path(result["published_path"]))
    made, cached = result["llm_calls_made"], result["llm_calls_cached"]
    added = sum(result["rows_added"].values())
    if made == 0 and added == 0:
        console.print(
            f"Nothing new: 0 LLM calls made ({cached} served from cache), "
            "no rows added except this run's record."
        )
    else:
        console.print(f"{made} LLM calls made, {cached} served from cache; {added} rows added.")
    published = Path(result["published_path"])
    console.print(f"Warehouse (written by runs): {Path(result['db_path']).resolve()}")
    console.print(
        f"Published copy for analysts (read-only, safe during runs): {published.resolve()}"
    )
    console.print("Query it:", soft_wrap=True)
    console.print("  " + _QUERY_HINT.format(path=published.resolve()), soft_wrap=True, markup=False)
    _print_review_hint(console, result)


def _print_review_hint(console: Any, result: dict[str, Any]) -> None:
    """How many QA pairs wait for a reviewer, and the command that reviews them (DESIGN §6)."""
    from flows.review import pending_count

    db_path = Path(result["db_path"])
    waiting = pending_count(db_path, result["dataset_version"])
    if waiting or result["review_mode"] == "manual":
        console.print(
            f"{waiting} QA pairs wait for review; review them with: "
            f"lilo review --data-dir {db_path.parent.resolve()}",
            soft_wrap=True,
            markup=False,
        )
