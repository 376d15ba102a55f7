"""Materialize stage: a new result version when scores changed, the analyst views, the
report and the UI artifacts (§10). The run publishes the serving copy and Parquet files
when it ends, with its final status (flows/_run.py)."""

from __future__ import annotations

import socket
from collections.abc import Sequence

from prefect import flow

from lilo.flows._artifacts import publish
from lilo.flows._load import ready_samples, waiting_samples
from lilo.flows._results_report import publish_report
from lilo.flows._stage import StageReport, stage
from lilo.flows._statistics import record_statistics
from lilo.tasks.config import Settings
from lilo.tasks.formatting import Artifact, markdown_table
from lilo.tasks.leaderboard import Board
from lilo.tasks.llm import make_client, make_judge_client
from lilo.tasks.results_report import leaderboard_table
from lilo.tasks.scoring import scored_by
from lilo.tasks.sweep import method_variants
from lilo.warehouse import Warehouse
from lilo.warehouse.queries.results import (
    default_version,
    read_board,
    read_scope,
    scope_changes,
    view,
)
from lilo.warehouse.results import Expected, ResultVersion, materialize_results

__all__ = ["expected_of", "materialize_flow", "result_version"]


def expected_of(wh: Warehouse, settings: Settings, runs: Sequence[Settings] = ()) -> Expected:
    """What a run with `settings` asked for: its ready samples (and those waiting for
    review) x its method variants x its lengths; with `runs`, the variants and lengths of
    all of them together (the reproduction's runs, one version holding them all)."""
    ready, qa = ready_samples(wh, settings)
    every = runs or [settings]
    return Expected(
        [s.sample_id for s in ready],
        list(dict.fromkeys(spec.variant for r in every for _, _, spec in method_variants(r))),
        list(dict.fromkeys(t for r in every for t in r.generate.target_words)),
        make_client(settings).backbone,
        waiting_samples(wh, settings, qa),
        make_judge_client(settings).backbone,
    )


def result_version(
    wh: Warehouse, settings: Settings, run_id: str, expected: Expected
) -> ResultVersion | None:
    """The result version of `expected` made by `run_id` (the latest one when its cells are
    the same), scored by the registered scores; None while nothing is scored."""
    return materialize_results(
        wh,
        settings.dataset_version,
        run_id,
        expected,
        scored_by=scored_by(),
        publish_partial=settings.publish_partial,
    )


@flow(name="materialize", log_prints=True)
def materialize_flow(settings: Settings, run_id: str) -> StageReport:
    with stage("materialize", settings, run_id) as (report, wh):
        expected = expected_of(wh, settings)
        shown = default_version(wh)  # the version the leaderboard shows until now
        result = result_version(wh, settings, run_id, expected)
        if result is None:
            report.note("no scores yet: nothing to materialize")
            return report
        if result.created:
            report.added("res_versions", 1)
            report.added("res_scores", result.n_rows)
            report.note(f"result version {result.version} ({result.n_rows} score rows)")
        else:
            report.note(f"scores unchanged: result version {result.version} still current")
        if scope := read_scope(wh, result.version):
            report.note(
                f"result version {result.version} holds what the run asked for: {scope.describe()}"
            )
        now_shown = default_version(wh)
        changes = [
            f"the leaderboard now shows result version {now_shown}: {change}"
            for change in (
                scope_changes(wh, shown, now_shown)
                if shown is not None and now_shown is not None and now_shown != shown
                else []
            )
        ]
        for change in changes:
            report.note(change)
        report.added("res_cell_stats", record_statistics(wh, result.version, settings))
        if result.partial:
            report.note(
                f"result version {result.version} is PARTIAL: some expected summaries failed, "
                "are unscored or wait for review (`lilo failures` lists them); "
                + (
                    "published as the default leaderboard (publish_partial)"
                    if result.published
                    else "the default leaderboard keeps the last complete version "
                    "(--publish-partial, the setting publish_partial, publishes partial ones)"
                )
            )
        published = settings.published_path
        leaderboard = view(wh, "leaderboard")
        board = Board.of(read_board(wh))  # the version the `leaderboard` view shows
        curve = view(wh, "position_curve")
        permutation = view(wh, "position_permutation")
        winrate = view(wh, "winrate")
        report_path = publish_report(wh, settings, result.version, changed=result.created)
        leaderboard_artifact = Artifact(
            "leaderboard",
            table=leaderboard_table(leaderboard),
            description=f"Dataset {board.dataset_version}, result version {board.version}. "
            f"{board.scope_line()}. S_l, S_c, S_q (x100) by method and length; overall_s_*: "
            "Table 2's Overall (each score's per-length means averaged over the lengths run)",
        )
        results_artifact = Artifact(
            "results",
            markdown=(
                f"# lilo results, version {result.version}\n\n"
                f"{board.markdown(stacked=True)}\n"
                + "".join(f"**Note**: {change}.\n\n" for change in changes)
                + (
                    "**Partial**: some expected summaries failed or are unscored.\n\n"
                    if result.partial
                    else ""
                )
                + f"## S_single by paper position\n\n{markdown_table(curve)}\n\n"
                + (
                    f"## Permutation U-curve\n\n{markdown_table(permutation)}\n\n"
                    if not permutation.empty
                    else ""
                )
                + (f"## Win-rate\n\n{markdown_table(winrate)}\n\n" if not winrate.empty else "")
                + f"On the machine that ran this flow (`{socket.gethostname()}`): the published "
                f"copy `{published.resolve()}`, and the report with the figures "
                f"`{report_path.resolve()}` (the run-summary artifact says how to open it)"
            ),
            description=f"Leaderboard and position curve, result version {result.version} "
            f"(dataset {settings.dataset_version})",
        )
        publish(leaderboard_artifact, results_artifact)
        report.note(f"report: {report_path}")
    return report
