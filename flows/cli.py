"""`lilo`: one-off runs from a terminal. Every command runs the same Prefect flows that the
deployments run; nothing here computes."""

from __future__ import annotations

import argparse
import logging
import os
import sys
import time
from pathlib import Path
from typing import Any

__all__ = ["main"]

_QUERY_HINT = (
    'python -c "import duckdb; '
    "print(duckdb.connect('{path}', read_only=True).sql('SELECT * FROM leaderboard'))\""
)


def _quiet_prefect() -> None:
    """Prefect's own chatter off for terminal runs; lilo's stage lines stay (and reach the UI)."""
    defaults = {
        "PREFECT_LOGGING_LEVEL": "WARNING",
        "PREFECT_LOGGING_EXTRA_LOGGERS": "lilo",
        "PREFECT_SERVER_ANALYTICS_ENABLED": "false",
        "PREFECT_SERVER_EPHEMERAL_STARTUP_TIMEOUT_SECONDS": "90",
        "HF_HUB_OFFLINE": "1",
        "TOKENIZERS_PARALLELISM": "false",
        "TRANSFORMERS_VERBOSITY": "error",
    }
    for key, value in defaults.items():
        os.environ.setdefault(key, value)


def _console_logging() -> None:
    from rich.logging import RichHandler

    handler = RichHandler(show_path=False, show_level=False, markup=False, log_time_format="[%X]")
    lilo_log = logging.getLogger("lilo")
    lilo_log.setLevel(logging.INFO)
    lilo_log.addHandler(handler)


def _parse_list(value: str | None, cast: type = str) -> list[Any] | None:
    return [cast(v.strip()) for v in value.split(",") if v.strip()] if value else None


def _overrides(args: argparse.Namespace) -> dict[str, Any]:
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
    return found


def _run_flows(settings: Any) -> dict[str, Any]:
    """Run the pipeline flow with heartbeats off (fine for one-off runs, DESIGN §13)."""
    from prefect.settings import PREFECT_FLOWS_HEARTBEAT_FREQUENCY, temporary_settings

    from flows.pipeline import lilo_pipeline

    with temporary_settings(updates={PREFECT_FLOWS_HEARTBEAT_FREQUENCY: None}):
        return lilo_pipeline(overrides=_settings_as_overrides(settings))


def _settings_as_overrides(settings: Any) -> dict[str, Any]:
    data = settings.model_dump(mode="json")
    data["llm"]["api_key"] = settings.llm.api_key
    return data


def cmd_demo(args: argparse.Namespace) -> int:
    from tasks.config import load_settings
    from tasks.synthetic.corpus import write_corpus
    from tasks.synthetic.mirror import Mirror

    settings = load_settings(Path(args.config) if args.config else None, _overrides(args))
    corpus_dir = settings.data_dir / "demo-corpus"
    manifest = write_corpus(corpus_dir)
    survey_ids = [item.arxiv_id for item in manifest.items if item.role == "survey"]
    print(f"demo corpus: {len(manifest.items)} e-prints in {corpus_dir}")
    with Mirror(corpus_dir) as mirror:
        settings = settings.with_overrides(
            {
                "surveys": survey_ids,
                "arxiv.api_url": mirror.api_url,
                "arxiv.eprint_url": mirror.eprint_url,
                "arxiv.delay_s": 0.0,
                "arxiv.backoff_s": 0.1,
            }
        )
        print(f"loopback arXiv mirror at {mirror.base_url}; running the pipeline ...")
        started = time.perf_counter()
        result = _run_flows(settings)
    _print_summary(result, time.perf_counter() - started)
    return 0 if result["status"] == "completed" else 1


def cmd_run(args: argparse.Namespace) -> int:
    from tasks.config import load_settings

    overrides = _overrides(args)
    if args.survey:
        overrides["surveys"] = args.survey
    settings = load_settings(Path(args.config) if args.config else None, overrides)
    if not settings.surveys:
        print(
            "no surveys to start from: pass --survey ARXIV_ID (repeatable), set LILO_SURVEYS, "
            "or try `lilo demo` for the offline demo corpus",
            file=sys.stderr,
        )
        return 2
    started = time.perf_counter()
    result = _run_flows(settings)
    _print_summary(result, time.perf_counter() - started)
    return 0 if result["status"] == "completed" else 1


def cmd_mirror(args: argparse.Namespace) -> int:
    from tasks.synthetic.corpus import write_corpus
    from tasks.synthetic.mirror import serve_forever

    corpus = Path(args.corpus)
    if not (corpus / "manifest.json").exists():
        write_corpus(corpus)
        print(f"wrote the synthetic corpus to {corpus}")
    print(
        f"serving {corpus} at http://{args.host}:{args.port}/ (Atom API: /api/query, "
        f"e-prints: /e-print/<id>); point LILO_ARXIV__API_URL and LILO_ARXIV__EPRINT_URL here. "
        "Ctrl-C stops."
    )
    try:
        serve_forever(corpus, args.host, args.port)
    except KeyboardInterrupt:
        pass
    return 0


def cmd_corpus(args: argparse.Namespace) -> int:
    from tasks.synthetic.corpus import write_corpus

    manifest = write_corpus(Path(args.out))
    print(f"wrote {len(manifest.items)} e-prints and manifest.json to {args.out}")
    return 0


def cmd_leaderboard(args: argparse.Namespace) -> int:
    from tasks.config import load_settings

    settings = load_settings(Path(args.config) if args.config else None, _overrides(args))
    _print_leaderboard(settings.published_path)
    return 0


def _print_leaderboard(published: Path) -> None:
    import duckdb
    from rich.console import Console
    from rich.table import Table

    console = Console()
    if not published.exists():
        console.print(f"no published results at {published}: run `lilo demo` or `lilo run` first")
        return
    con = duckdb.connect(str(published), read_only=True)
    try:
        version = con.execute("SELECT max(version) FROM res_versions").fetchall()[0][0]
        cursor = con.execute("SELECT * FROM leaderboard")
        names = [d[0] for d in cursor.description]
        rows = cursor.fetchall()
    finally:
        con.close()
    table = Table(title=f"Leaderboard (result version {version}; S_l, S_c, S_q x100)")
    for name in names:
        table.add_column(name, justify="right" if name.startswith("s_") else "left")
    for row in rows:
        table.add_row(*("" if v is None else str(v) for v in row))
    console.print(table)


def _print_summary(result: dict[str, Any], seconds: float) -> None:
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
    _print_leaderboard(Path(result["published_path"]))
    made, cached = result["llm_calls_made"], result["llm_calls_cached"]
    added = sum(result["rows_added"].values())
    if made == 0 and added == 0:
        console.print(
            f"Nothing new: 0 LLM calls made ({cached} served from cache), "
            "no rows added except this run's record."
        )
    else:
        console.print(f"{made} LLM calls made, {cached} served from cache; {added} rows added.")
    published = result["published_path"]
    console.print(f"Warehouse: {Path(result['db_path']).resolve()}")
    console.print(f"Published copy for analysts (read-only, safe during runs): {Path(published).resolve()}")
    console.print("Query it:  " + _QUERY_HINT.format(path=published))


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="lilo",
        description="Long-In, Long-Out: build long-input/long-output benchmarks and score methods.",
    )
    sub = parser.add_subparsers(dest="command", required=True)

    def settings_args(p: argparse.ArgumentParser) -> None:
        p.add_argument("--config", help="TOML settings file (also LILO_CONFIG)")
        p.add_argument("--data-dir", help="where the warehouse, archives and caches live")
        p.add_argument("--review", choices=("auto", "manual"), help="QA review mode")
        p.add_argument("--target-words", help="comma-separated target lengths, e.g. 4000,8000,16000")
        p.add_argument("--methods", help="comma-separated methods, e.g. single,ral_writer")
        p.add_argument(
            "--set", action="append", metavar="KEY=VALUE", help="any setting, e.g. llm.model=gpt-4o"
        )

    demo = sub.add_parser(
        "demo",
        help="the whole pipeline on the built-in synthetic corpus, offline",
        description="Writes the synthetic corpus, serves it from a loopback arXiv mirror and runs "
        "every stage against it with the offline engine. Run it twice: the second run makes no "
        "LLM calls and adds no rows but its run record.",
    )
    settings_args(demo)
    demo.set_defaults(func=cmd_demo)

    run = sub.add_parser("run", help="the pipeline from real surveys (arXiv ids)")
    settings_args(run)
    run.add_argument("--survey", action="append", help="a survey's arXiv id (repeatable)")
    run.set_defaults(func=cmd_run)

    mirror = sub.add_parser("mirror", help="serve a corpus as a loopback arXiv mirror")
    mirror.add_argument("--corpus", default="lilo-data/demo-corpus", help="corpus folder")
    mirror.add_argument("--host", default="127.0.0.1")
    mirror.add_argument("--port", type=int, default=8008)
    mirror.set_defaults(func=cmd_mirror)

    corpus = sub.add_parser("corpus", help="write the synthetic demo corpus to a folder")
    corpus.add_argument("out")
    corpus.set_defaults(func=cmd_corpus)

    board = sub.add_parser("leaderboard", help="print the latest published leaderboard")
    settings_args(board)
    board.set_defaults(func=cmd_leaderboard)
    return parser


def main(argv: list[str] | None = None) -> int:
    args = _parser().parse_args(argv)
    _quiet_prefect()
    _console_logging()
    return int(args.func(args))


if __name__ == "__main__":
    raise SystemExit(main())
