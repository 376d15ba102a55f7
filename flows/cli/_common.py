"""What the command modules share: their options, settings from them, mistakes as one line,
running the pipeline, printing results."""

from __future__ import annotations

import argparse
import contextlib
import logging
import shlex
import sys
import threading
from collections.abc import Iterable, Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import Any, NoReturn, TypeVar

from tasks.config import Settings, load_settings
from tasks.errors import LiloError

__all__ = [
    "CLIError",
    "Parser",
    "add_common_args",
    "add_pipeline_args",
    "add_publish_args",
    "add_renamed_arg",
    "check_names",
    "print_leaderboard",
    "print_summary",
    "progress",
    "published_results",
    "require_warehouse",
    "run_pipeline_flow",
    "running_flows",
    "settings_from_args",
    "start_prefect_early",
]

T = TypeVar("T")


class CLIError(LiloError):
    """A mistake the user can fix, or a lookup that found nothing: printed as one
    `lilo: ...` line, exit `code`."""

    complete = True

    def __init__(self, message: str, code: int = 2) -> None:
        super().__init__(message)
        self.exit_code = code


class Parser(argparse.ArgumentParser):
    """Usage mistakes as one line on stderr that names the help to read; exit 2. Options are
    taken whole only (`--sample 3` is not `--samples 3`), in sub-commands too (they are made
    with this class)."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        kwargs["allow_abbrev"] = False
        super().__init__(*args, **kwargs)

    def error(self, message: str) -> NoReturn:
        self.exit(2, f"lilo: {message} (see `{self.prog} --help`)\n")


def add_renamed_arg(p: argparse.ArgumentParser, old: str, new: str, what: str) -> None:
    """An option's old name, hidden from --help, as a usage error that names the new one."""

    class Renamed(argparse.Action):
        def __call__(self, parser: Any, *_: Any) -> None:
            parser.error(f"{old} is now {new} ({what})")

    p.add_argument(
        old, action=Renamed, nargs="?", default=argparse.SUPPRESS, help=argparse.SUPPRESS
    )


def add_common_args(p: argparse.ArgumentParser) -> None:
    """Where the data lives and how settings are given: every command takes these. Defaults
    are suppressed so that an option given before a sub-command is not reset after it."""
    p.add_argument(
        "--data-dir",
        default=argparse.SUPPRESS,
        help="where the warehouse, archives and caches live (default: lilo-data)",
    )
    p.add_argument("--config", default=argparse.SUPPRESS, help="TOML settings file")
    p.add_argument(
        "--set",
        action="append",
        type=_key_value,
        default=argparse.SUPPRESS,
        metavar="KEY=VALUE",
        help="any setting, e.g. llm.model=gpt-4o (repeatable)",
    )
    p.add_argument(
        "--debug",
        action="store_true",
        default=argparse.SUPPRESS,
        help="show the traceback of an error",
    )


def add_pipeline_args(p: argparse.ArgumentParser) -> None:
    """What a run computes: for the commands that run the pipeline."""
    p.add_argument("--review", choices=("auto", "manual"), help="QA review mode")
    p.add_argument(
        "--target-words",
        type=_lengths,
        help="comma-separated target lengths, e.g. 4000,8000,16000",
    )
    p.add_argument("--methods", type=_names, help="comma-separated methods, e.g. single,ral_writer")
    p.add_argument(
        "--profile",
        choices=("paper",),
        help="a named set of settings: `paper` is the setting behind the paper's Table 2 "
        "(temperatures, GPT-4o-mini judge, methods, lengths; docs/reference.md); explicit "
        "settings (--set, LILO_*, --config) still win (setting profile)",
    )
    p.add_argument(
        "--judge-repeats",
        type=int,
        metavar="N",
        help="ask the judge N more times per summary and report its own spread per cell "
        "(setting stats.judge_repeats; the judge_spread view)",
    )
    p.add_argument(
        "--sweep",
        action="append",
        type=_sweep,
        metavar="SETTING=V1,V2,...",
        help="run the methods it changes at each value, as named variants on one leaderboard, "
        "e.g. generate.ral.k=4,8,12,16; two --sweep make a grid (setting generate.sweep)",
    )


def add_publish_args(p: argparse.ArgumentParser) -> None:
    """How results are published: for the commands that run the materialize stage."""
    p.add_argument(
        "--publish-partial",
        action="store_true",
        help="publish this run's result version as the default leaderboard even when it is "
        "partial (some summaries failed or are unscored); without it the leaderboard keeps "
        "the last complete version (setting publish_partial)",
    )


def _lengths(value: str) -> list[int]:
    try:
        return [int(v) for v in _names(value)]
    except ValueError:
        raise argparse.ArgumentTypeError(
            f"{value!r} is not comma-separated whole numbers, e.g. 4000,8000,16000"
        ) from None


def _names(value: str) -> list[str]:
    names = [v.strip() for v in value.split(",") if v.strip()]
    if not names:
        raise argparse.ArgumentTypeError(f"{value!r} names nothing")
    return names


def _sweep(item: str) -> tuple[str, list[Any]]:
    from tasks.sweep import SweepError, parse_sweep

    try:
        return parse_sweep(item)
    except SweepError as exc:
        raise argparse.ArgumentTypeError(str(exc)) from None


def _key_value(item: str) -> tuple[str, str]:
    key, sep, value = item.partition("=")
    if not sep or not key.strip():
        raise argparse.ArgumentTypeError(f"{item!r} is not KEY=VALUE, e.g. llm.model=gpt-4o")
    return key.strip(), value.strip()


def settings_from_args(args: argparse.Namespace, **extra: Any) -> Settings:
    """Defaults < TOML file < LILO_* environment < command-line options."""
    found: dict[str, Any] = {}
    for option, key in (
        ("data_dir", "data_dir"),
        ("review", "qa.review"),
        ("target_words", "generate.target_words"),
        ("methods", "generate.methods"),
        ("publish_partial", "publish_partial"),
        ("profile", "profile"),
        ("judge_repeats", "stats.judge_repeats"),
    ):
        if getattr(args, option, None):
            found[key] = getattr(args, option)
    found.update(getattr(args, "set", None) or [])
    if getattr(args, "sweep", None):
        found["generate.sweep"] = dict(args.sweep)
    config = getattr(args, "config", None)
    return load_settings(Path(config) if config else None, {**found, **extra})


def check_names(settings: Settings) -> None:
    """The methods the settings name exist: a typo fails here, not at the generate stage."""
    from flows._preflight import PreflightError
    from flows._preflight import check_names as check

    try:
        check(settings)
    except PreflightError as exc:
        raise CLIError(str(exc)) from exc


def require_warehouse(settings: Settings) -> None:
    """Commands that read results never create a warehouse: a mistyped --data-dir says so."""
    if not settings.db_path.exists():
        raise CLIError(
            f"no warehouse at {settings.db_path}: pass the --data-dir that holds lilo.duckdb, "
            "or create one with `lilo demo`, `lilo run` or `lilo import`"
        )


@contextmanager
def published_results(settings: Settings) -> Iterator[Any]:
    """A read-only connection to the published copy, for commands that read results; a
    missing warehouse or nothing published yet is a one-line error."""
    import duckdb

    require_warehouse(settings)
    published = settings.published_path
    if not published.exists():
        raise CLIError(f"no published results at {published}: run the pipeline first", code=1)
    con = duckdb.connect(str(published), read_only=True)
    try:
        yield con
    finally:
        con.close()


def progress(items: Sequence[T], description: str) -> Iterable[T]:
    """`items` with a progress bar on stderr while it is a terminal; as they are otherwise
    (nothing in pipes, logs and tests)."""
    from rich.console import Console
    from rich.progress import track

    console = Console(stderr=True)
    if not console.is_terminal:
        return items
    return track(items, description=description, console=console, transient=True)


def start_prefect_early(settings: Settings) -> None:
    """Start Prefect's temporary API server now, for a command that will run flows and has
    no PREFECT_API_URL: its start runs while the command prepares (flows/cli/_server.py);
    `running_flows` waits for it. On a new warehouse every stage has work, so the libraries
    the clean and samples stages load (Great Expectations, the local embedding model: about
    4 s) load meanwhile on a thread; a warehouse with results may need neither."""
    from flows.cli._server import start

    start()
    if not settings.db_path.exists():
        threading.Thread(target=_warm_up, args=(settings,), name="warm-up", daemon=True).start()


def _warm_up(settings: Settings) -> None:
    """Loads what a first run needs; a failure here is the stage's to report, later."""
    with contextlib.suppress(Exception):
        import great_expectations  # noqa: F401

        if settings.embedding.backend == "local":
            from tasks.embeddings import Embedder

            Embedder(settings).label  # noqa: B018 (loads the model)


@contextmanager
def running_flows(debug: bool) -> Iterator[None]:
    """Flows run from a terminal: heartbeats off (fine for one-off runs, DESIGN §13) and,
    unless `debug`, no tracebacks on the console: a failure is the one line `main` prints,
    and its traceback still reaches the run's logs in the Prefect UI."""
    from prefect.logging.configuration import ensure_logging_setup
    from prefect.settings import (
        PREFECT_API_URL,
        PREFECT_FLOWS_HEARTBEAT_FREQUENCY,
        temporary_settings,
    )

    from flows.cli._server import wait

    try:
        api_url = wait()
    except RuntimeError as exc:
        raise CLIError(str(exc), code=1) from exc
    updates: dict[Any, Any] = {PREFECT_FLOWS_HEARTBEAT_FREQUENCY: None}
    if api_url:
        updates[PREFECT_API_URL] = api_url
    ensure_logging_setup()
    quiet = _NoTraceback()
    handlers = [] if debug else list(logging.getLogger().handlers)
    for handler in handlers:
        handler.addFilter(quiet)
    try:
        with temporary_settings(updates=updates):
            yield
    finally:
        for handler in handlers:
            handler.removeFilter(quiet)


class _NoTraceback(logging.Filter):
    def filter(self, record: logging.LogRecord) -> bool:
        return record.exc_info is None


def run_pipeline_flow(settings: Settings, dataset: bool, debug: bool) -> dict[str, Any]:
    """Run the pipeline flow (or, with `dataset`, the run on an existing dataset version),
    after a quick look at the endpoints it needs: an unreachable one fails here at once,
    before Prefect starts (the flow checks again, for deployment runs)."""
    from flows._preflight import check_endpoints

    check_endpoints(settings, arxiv=not dataset)
    from flows.pipeline import lilo_pipeline, lilo_run_dataset  # while the server starts

    with running_flows(debug):
        if dataset:
            return lilo_run_dataset(settings.dataset_version, overrides=settings.flow_parameters())
        return lilo_pipeline(overrides=settings.flow_parameters())


def print_leaderboard(published: Path) -> bool:
    """The default leaderboard as the paper's Table 2 (flows/cli/leaderboard.py); False,
    printing nothing, when nothing is published."""
    from flows.cli.leaderboard import print_published

    return print_published(published)


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
    published = Path(result["published_path"])
    has_results = print_leaderboard(published)
    if not has_results:
        console.print("No results published yet: runs publish once summaries are scored.")
    made, cached = result["llm_calls_made"], result["llm_calls_cached"]
    added = sum(result["rows_added"].values())
    if made == 0 and added == 0:
        console.print(
            f"Nothing new: 0 LLM calls made ({cached} served from cache), "
            "no rows added except this run's record."
        )
    else:
        console.print(f"{made} LLM calls made, {cached} served from cache; {added} rows added.")
    console.print(f"Warehouse (written by runs): {Path(result['db_path']).resolve()}")
    if has_results:
        console.print(
            f"Published copy for analysts (read-only, safe during runs): {published.resolve()}"
        )
        from warehouse.queries.results import query_program

        program = query_program(published.resolve())
        hint = f"{shlex.quote(sys.executable)} -c {shlex.quote(program)}"
        console.print("Query it:", soft_wrap=True)
        console.print("  " + hint, soft_wrap=True, markup=False)
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
