"""`lilo reproduce ral-writer`: the runs the RAL-Writer paper's tables and figures need
(tasks/reproduce/plan.py), their cost estimated before they start, each run as any
`lilo run --dataset` (cache, resume, failure records, result versions), then one report
page with every table and figure (tasks/reproduce/page.py) and each figure as a Prefect
artifact."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, cast

import pandas as pd
from prefect import flow

from lilo.flows._artifacts import publish
from lilo.flows._load import check_dataset_version, load_pack, load_papers, ready_samples
from lilo.flows._publish import publish as publish_copy
from lilo.flows._stage import open_warehouse
from lilo.flows._statistics import record_statistics
from lilo.flows.materialize import expected_of, result_version
from lilo.flows.pipeline import lilo_run_dataset
from lilo.tasks.config import Settings
from lilo.tasks.config_loading import flow_parameters, run_settings
from lilo.tasks.files import write_atomic
from lilo.tasks.formatting import Artifact
from lilo.tasks.llm import make_client, make_judge_client
from lilo.tasks.methods import Unit
from lilo.tasks.methods._prompts import task_instruction
from lilo.tasks.reproduce import figures
from lilo.tasks.reproduce.claims import claims
from lilo.tasks.reproduce.page import PaperPage, Section, render_page
from lilo.tasks.reproduce.plan import (
    FIG6A,
    FIG6B_AT,
    Estimate,
    PlannedRun,
    estimate_units,
    figure_length,
    plan_runs,
)
from lilo.tasks.reproduce.published import (
    OVERALL_TOLERANCE,
    overall_check,
    published_numbers,
    statements,
    statements_about,
)
from lilo.tasks.reproduce.sections import (
    restated_chunks,
    table2,
    table2_beside,
    table4,
    table4_beside,
)
from lilo.tasks.results_report import data_uri
from lilo.tasks.scoring import leaderboard_scores
from lilo.tasks.sweep import method_variants
from lilo.tasks.tokens import count_word_tokens
from lilo.warehouse.queries.calls import generation_history, judge_cost, run_calls
from lilo.warehouse.queries.datasets import sample_papers
from lilo.warehouse.queries.generations import succeeded_generations
from lilo.warehouse.queries.reproduction import reproduction_views, score_means
from lilo.warehouse.queries.results import (
    default_version,
    headline_scores,
    latest_version_run,
    ral_recall_of,
)

if TYPE_CHECKING:
    from lilo.tasks.methods.ral_writer import RALSettings

__all__ = ["Planned", "plan_reproduction", "reproduce_ral_writer", "write_paper_page"]


@dataclass(frozen=True)
class Planned:
    run: PlannedRun
    settings: Settings
    estimate: Estimate


def plan_reproduction(settings: Settings, lengths: tuple[int, ...]) -> list[Planned]:
    """Each planned run with the generations it still has to make (those no earlier run or
    earlier planned run makes) and their estimated cost."""
    with open_warehouse(settings) as wh:
        check_dataset_version(wh, settings)
        papers = load_papers(wh)
        ready, qa = ready_samples(wh, settings)
        pack = load_pack(wh, settings.dataset_version)
        done = succeeded_generations(wh)
        llm = make_client(settings)
        history = generation_history(wh, llm.backbone)
        judged = judge_cost(wh)
    calls, tokens_in, tokens_out, scored = judged
    judge = (
        (
            float(calls or 0) / scored,
            float(tokens_in or 0) / scored,
            float(tokens_out or 0) / scored,
        )
        if scored
        else None
    )
    prompt_tokens: dict[tuple[str, int], int] = {}
    planned: set[str] = set()
    plans = []
    for run in plan_runs(lengths):
        at = settings.with_overrides(run.overrides)
        units = []
        for name, _, spec in method_variants(at):
            for target in at.generate.target_words:
                for sample in ready:
                    texts = [papers[p] for p in sample.paper_ids]
                    orders = len(texts) if at.generate.permutations else 1
                    for rotation in range(orders):
                        gid = spec.generation_id(Unit(sample, texts, target, rotation), llm, pack)
                        if gid in done or gid in planned:
                            continue
                        planned.add(gid)
                        key = (sample.sample_id, target)
                        if key not in prompt_tokens:
                            instruction = task_instruction(pack, [p.text for p in texts], target)
                            prompt_tokens[key] = count_word_tokens(instruction)
                        units.append(
                            {
                                "method": name,
                                "target_words": target,
                                "prompt_tokens": prompt_tokens[key],
                                "steps": max(2, target // 600),
                                "questions": sum(
                                    p.status == "approved" for p in qa.get(sample.sample_id, [])
                                ),
                            }
                        )
        plans.append(Planned(run, at, estimate_units(pd.DataFrame(units), history, judge)))
    return plans


def _made(wh: Any, run_id: str) -> dict[str, int]:
    row = run_calls(wh, run_id)
    names = ("calls_made", "calls_cached", "tokens_in_made", "tokens_out_made")
    return dict(zip(names, row, strict=True))


@flow(name="lilo-reproduce", log_prints=True)
def reproduce_ral_writer(
    overrides: dict[str, Any], lengths: list[int], plans: list[dict[str, Any]] | None = None
) -> dict[str, Any]:
    """Run each planned run that has work, then write the report page. `plans` are the
    estimates the caller printed, kept for the page's cost table."""
    settings = run_settings(overrides)
    planned = plan_reproduction(settings, tuple(lengths))
    estimates = {p["run"]: p for p in plans or []}
    cost, run_ids = [], []
    for p in planned:
        row = estimates.get(p.run.name) or _estimate_row(p)
        made = {"calls_made": 0, "calls_cached": 0, "tokens_in_made": 0, "tokens_out_made": 0}
        if p.estimate.generations:
            print(f"reproduce: {p.run.name} ({p.run.serves}): {p.estimate.generations} to make")
            # Each its own flow run, so each its own run record and calls.
            result = lilo_run_dataset(
                p.settings.dataset_version, overrides=flow_parameters(p.settings)
            )
            run_ids.append(result["run_id"])
            with open_warehouse(settings) as wh:
                made = _made(wh, result["run_id"])
        cost.append({**row, **made})
    _materialize_together(settings, planned, run_ids)
    path = write_paper_page(settings, tuple(lengths), pd.DataFrame(cost))
    return {"page": str(path), "cost": cost}


def _materialize_together(settings: Settings, planned: list[Planned], run_ids: list[str]) -> None:
    """One result version holding every planned run's cells. Each run's own version holds
    that run's scope alone, and the page is drawn from the views of the latest version:
    without this, Table 2 and the claims would show the last run's (Figure 8's) RAL-Writer
    only. Made by the last run that ran (else the latest version's run); the same cells as
    the latest version make no new one, and the published copy is refreshed."""
    with open_warehouse(settings) as wh:
        run_id = run_ids[-1] if run_ids else latest_version_run(wh)
        if run_id is None:
            return
        expected = expected_of(wh, settings, [p.settings for p in planned])
        result = result_version(wh, settings, run_id, expected)
        if result is None:
            return
        record_statistics(wh, result.version, settings)
        if result.created:
            print(f"reproduce: result version {result.version} holds every planned run's cells")
    publish_copy(settings)


def _estimate_row(p: Planned) -> dict[str, Any]:
    e = p.estimate
    return {
        "run": p.run.name,
        "serves": p.run.serves,
        "generations": e.generations,
        "calls_estimated": e.calls,
        "tokens_in_estimated": e.tokens_in,
        "tokens_out_estimated": e.tokens_out,
        "estimated_from": e.source,
    }


def estimate_rows(planned: list[Planned]) -> list[dict[str, Any]]:
    return [_estimate_row(p) for p in planned]


def paper_variants(settings: Settings, lengths: tuple[int, ...]) -> dict[str, str]:
    """The leaderboard label of each paper method in the Table 2 run (`compress` runs as
    `compress[extractive]` where LLMLingua is not installed): the cells that stand beside
    the paper's."""
    table2_run = next(run for run in plan_runs(lengths) if run.name == "table2")
    at = settings.with_overrides(table2_run.overrides)
    return {name: spec.variant for name, _, spec in method_variants(at)}


def _stands_for(own: dict[str, str]) -> str:
    renamed = [f"{method} is {variant}" for method, variant in own.items() if variant != method]
    return f" lilo's cells: {', '.join(renamed)}." if renamed else ""


def _sections(settings: Settings, wh: Any, version: int, lengths: tuple[int, ...]) -> list[Section]:
    views = reproduction_views(wh)
    intervals, cost, sweep = views["cell_intervals"], views["cost"], views["ral_sweep"]
    scores = headline_scores(wh, version, [h.name for h in leaderboard_scores()])
    lengths_view, curve = views["output_lengths"], views["position_curve"]
    permutation, spread = views["position_permutation"], views["judge_spread"]
    at = figure_length(lengths)
    main_rows = intervals[~intervals["variant"].str.startswith("ral_writer[")]
    own = paper_variants(settings, lengths)
    aw = score_means(wh, version, "agentwrite", at)
    means = {
        "s_c": aw.get("consistency"),
        "s_single": aw.get("consistency_single"),
        "s_cross": aw.get("consistency_cross"),
    }
    baseline = {k: float(v) for k, v in means.items() if v is not None and not pd.isna(v)}
    a, b = FIG6B_AT["generate.ral.a"], FIG6B_AT["generate.ral.b"]
    sweep = sweep[sweep["target_words"] == at]
    grid = sweep[
        (sweep["k"] == 12)
        & sweep["a"].isin(FIG6A["generate.ral.a"])
        & sweep["b"].isin(FIG6A["generate.ral.b"])
    ]
    by_k = sweep[(sweep["a"] == a) & (sweep["b"] == b)]
    curve = curve[(curve["target_words"] == at) & ~curve["method"].str.startswith("ral_writer[")]
    return [
        Section(
            "table2",
            "Table 2: S_l, S_c, S_q per method and length, with Overall",
            "Each cell: mean [95% bootstrap interval] over samples; S_c - reference: the mean "
            f"paired difference with {settings.stats.reference} and the interval of the "
            "sign-flip test, p from it. Highlighted: within noise (p >= 0.05, the interval "
            "covers zero); n too small: fewer than 6 samples, no interval.",
            table2(main_rows),
            marked="within_noise",
        ),
        Section(
            "table2-published",
            "Table 2 beside the paper: every backbone, method and length",
            "The paper's S_l, S_c, S_q (tasks/reproduce/published.csv: all 120 values of its "
            "Table 2, each with its row and column) beside lilo's cell on the same backbone: "
            "mean [95% interval], n, and lilo minus the paper. * the paper's underlined best "
            "of its setting (backbone x length); + lilo's best of its setting. A backbone lilo "
            "has not run shows the paper's rows alone; a backbone lilo ran that the paper did "
            "not follows with lilo's rows alone. lilo's Overall is the mean of its lengths, "
            "shown beside the paper's only where lilo ran 4k, 8k and 16k. "
            + statements_about("Table 2")
            + " "
            + statements_about("Compress")
            + _stands_for(own),
            table2_beside(intervals, own),
        ),
        _overall_check(),
        Section(
            "claims",
            "The paper's claims, checked on lilo's run",
            "Each ordering the paper reports (which method ranks first per setting and score; "
            "its observations), whether the paper's own numbers bear it out, and whether "
            "lilo's run agrees: difference is the mean paired difference over the samples "
            "both cells scored with the 95% interval of the sign-flip test, p from it, n "
            "pairs (tasks/stats.py). Highlighted: reproduced, lilo agrees and the difference "
            "is not within noise. not run: lilo has no cell at that length or method. lilo's "
            "backbone need not be the paper's: a claim about an ordering is compared across "
            "models, values are not.",
            claims(published_numbers(), scores, seed=settings.stats.seed, own=own),
            marked="reproduced",
        ),
        _table3(settings, wh),
        Section(
            "table4",
            "Table 4: input tokens per summary (x10^3)",
            "AgentWrite against RAL-Writer per length and Overall, and the increase (the cost "
            "view).",
            table4(cost),
        ),
        Section(
            "table4-published",
            "Table 4 beside the paper",
            "The paper's 12 values of Table 4, input tokens per summary (x10^3) on "
            "Qwen2.5-14B-Instruct, beside lilo's from its ledger (the cost view) per length, "
            "on each backbone lilo ran. " + statements_about("Table 4"),
            table4_beside(cost),
        ),
        Section(
            "fig6a",
            "Figure 6a: S_c of RAL-Writer over a x b",
            f"At k = 12, {at} words (view ral_sweep). " + statements_about("Figure 6a"),
            grid,
            figures.fig6a_png(grid),
        ),
        Section(
            "fig6b",
            "Figure 6b: S_c of RAL-Writer by k",
            f"At a = {a}, b = {b}, {at} words; AgentWrite dashed (view ral_sweep). "
            + statements_about("Figure 6b")
            + _peak(by_k),
            by_k,
            figures.fig6b_png(by_k, baseline, a, b),
        ),
        Section(
            "fig7a",
            "Figure 7a: output length of Single",
            "Mean words written per required length, standard deviation as error bars "
            "(view output_lengths). " + statements_about("Figure 7a"),
            lengths_view[lengths_view["variant"] == "single"],
            figures.fig7a_png(lengths_view),
        ),
        Section(
            "fig7b",
            "Figure 7b: S_single by the paper's position",
            f"{at} words (view position_curve). " + statements_about("Figure 7b"),
            curve,
            figures.fig7b_png(curve, at),
        ),
        Section(
            "fig8",
            "Figure 8: S_single per slot over every cyclic order",
            "Each sample written in every cyclic order of its papers; S_single of the paper in "
            "each slot averaged over the orders (view position_permutation). "
            + statements_about("Figure 8"),
            permutation,
            figures.fig8_png(permutation),
        ),
        Section(
            "paper-text",
            "What the paper's text states",
            "The settings and figure results the paper states in words "
            "(tasks/reproduce/statements.csv), each with its section.",
            statements(),
        ),
        Section(
            "judge-spread",
            "The judge's own spread (--judge-repeats)",
            "Per cell, the standard deviation of a summary's score over the judge's answers "
            "(averaged over the cell) beside the spread over samples (view judge_spread); "
            "no rows without --judge-repeats.",
            spread,
        ),
    ]


def _peak(by_k: pd.DataFrame) -> str:
    """Where lilo's S_c peaks over k, said beside the paper's peak."""
    rows = by_k.dropna(subset=["s_c"])
    if rows.empty:
        return " lilo: no k swept."
    top = rows.loc[rows["s_c"].idxmax()]
    return f" lilo's S_c peaks at k = {int(top['k'])} ({top['s_c']:.2f})."


def _overall_check() -> Section:
    """The paper's Table 2 checked against itself: each Overall beside the mean of its
    lengths."""
    check = overall_check()
    off = check[~check["agrees"]]
    said = "; ".join(
        f"{r['backbone']} {r['method']} {r['metric']}: {r['printed']:.2f} printed, "
        f"{r['mean_of_lengths']:.2f} the mean"
        for r in off.to_dict(orient="records")
    )
    return Section(
        "overall-check",
        "The paper checked against itself: Overall is the mean of the three lengths",
        f"In {int(check['agrees'].sum())} of {len(check)} of Table 2's Overall cells the "
        f"Overall equals the mean of its 4k, 8k and 16k cells to rounding (within "
        f"{OVERALL_TOLERANCE}); not in: {said or 'none'}. lilo's Overall is the mean of "
        "its lengths (each sample's mean over the lengths it was scored at, averaged over "
        "samples). Highlighted: an Overall that is not its lengths' mean.",
        check.assign(off=~check["agrees"]),
        marked="off",
    )


def _table3(settings: Settings, wh: Any) -> Section:
    """The top 3 chunks RAL-Writer (at the paper's settings) restated for the second step of
    its first generation at the longest length."""
    recall = ral_recall_of(wh, "ral_writer")
    title = "Table 3: what RAL-Writer restated for one writing step (top 3)"
    if recall.empty:
        return Section("table3", title, "No RAL-Writer generation restated anything.", recall)
    first = recall.iloc[0]
    steps = recall[recall["generation_id"] == first["generation_id"]]
    step = 2 if (steps["step"] == 2).any() else int(first["step"])
    rows = steps[steps["step"] == step]
    paper_ids = sample_papers(wh)[first["sample_id"]]
    papers = load_papers(wh)
    pack = load_pack(wh, settings.dataset_version)
    instruction = task_instruction(
        pack, [papers[p].text for p in paper_ids], int(first["target_words"])
    )
    ral = cast("RALSettings", settings.generate.section("ral"))  # a plug-in's section
    return Section(
        "table3",
        title,
        f"Step {step} ({rows.iloc[0]['step_line']!s:.120}) of sample {first['sample_id']} at "
        f"{first['target_words']} words; rank 1 is placed last, nearest the step (view "
        "ral_recall).",
        restated_chunks(instruction, ral.chunk_words, ral.overlap_words, rows),
    )


def write_paper_page(settings: Settings, lengths: tuple[int, ...], cost: pd.DataFrame) -> Path:
    """The page of the current result version under `published/results/`, and each figure
    as a Prefect artifact (a Markdown image, as the run's other figures)."""
    with open_warehouse(settings) as wh:
        # The version the views show: the latest published one, else the latest.
        version = default_version(wh) or 0
        sections = _sections(settings, wh, version, lengths)
    page = PaperPage(
        settings.dataset_version,
        version,
        make_client(settings).backbone,
        make_judge_client(settings).backbone,
        sections,
        cost,
    )
    path = settings.published_path.parent / "results" / f"ral-writer-v{version:04d}.html"
    write_atomic(path, render_page(page), settings.data_dir)
    for s in sections:
        if s.png:
            image = data_uri(s.png)
            publish(
                Artifact(
                    f"paper-{s.key}",
                    f"{s.title}, result version {version}",
                    markdown=f"# {s.title}\n\n{s.note}\n\n![{s.key}]({image})\n",
                ),
                own_run=True,
            )
    return path
