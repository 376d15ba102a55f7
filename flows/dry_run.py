"""A run's price before it starts (`--dry-run`, docs/operations.md "What a run will cost").

The generate and score stages are planned as they would run: the same units (samples x
methods x lengths less what the warehouse holds), each method and scorer run on a
`PlanningClient` (tasks/llm/planning.py) that serves what the cache holds and sends nothing
else. The plan sums the calls by stage and method: how many, how many the cache holds
(free), input tokens, output tokens at their budgets (an upper bound) and the cost range at
`llm.prices` / `judge.prices`. Nothing is written to the warehouse; the plan is kept as a
small JSON beside the cache under the run's config hash, for the real run to compare."""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from lilo.flows._load import load_generations, load_pack, load_papers, ready_samples
from lilo.flows._stage import StageReport, open_warehouse
from lilo.flows.generate import generation_work
from lilo.flows.score import winrate_pairs
from lilo.tasks.config import Settings
from lilo.tasks.embeddings import Embedder
from lilo.tasks.files import write_atomic
from lilo.tasks.llm import make_client, make_judge_client
from lilo.tasks.llm.planning import PlannedCall, PlanningClient
from lilo.tasks.methods import get_method
from lilo.tasks.probes import ask, get_probe_task
from lilo.tasks.records import Generation
from lilo.tasks.scoring import ScoreContext, available_scorers, get_scorer
from lilo.tasks.scoring.winrate import judge_pair
from lilo.warehouse.queries.generations import (
    judged_pairs,
    scored_generations,
    succeeded_generations,
)

__all__ = ["Plan", "PlanRow", "format_plan", "keep_plan", "kept_plan", "plan_probe", "plan_run"]


@dataclass
class PlanRow:
    """The calls of one stage and method: all of them, those the cache holds, and of the
    others (to send) input tokens (`exact_in` of them counted, the rest estimated), output
    tokens at their budgets, and the cost range (None: a model without a price)."""

    stage: str
    method: str
    calls: int = 0
    cached: int = 0
    tokens_in: int = 0
    exact_in: int = 0
    max_out: int = 0
    estimated: int = 0
    unbounded: int = 0
    cost_low: float | None = 0.0
    cost_high: float | None = 0.0
    unpriced: list[str] = field(default_factory=list)

    def add(self, call: PlannedCall) -> None:
        self.calls += 1
        if call.cached:
            self.cached += 1
            return
        self.tokens_in += call.tokens_in
        self.exact_in += call.tokens_in if call.exact else 0
        self.max_out += call.max_out
        self.estimated += call.estimated
        self.unbounded += not call.bounded
        if call.price is None:
            self.cost_low = self.cost_high = None
            if call.model not in self.unpriced:
                self.unpriced.append(call.model)
        elif self.cost_low is not None and self.cost_high is not None:
            self.cost_low += call.price.of(call.tokens_in, 0)
            self.cost_high += call.price.of(call.tokens_in, call.max_out)


@dataclass
class Plan:
    """What a run would send (module doc); `notes` say what the plan cannot know."""

    config_hash: str
    units: int = 0
    what: str = "generations to make"  # what a unit is, as the first line says
    rows: list[PlanRow] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)

    def row(self, stage: str, method: str) -> PlanRow:
        for r in self.rows:
            if (r.stage, r.method) == (stage, method):
                return r
        self.rows.append(PlanRow(stage, method))
        return self.rows[-1]

    def total(self) -> PlanRow:
        total = PlanRow("all", "all")
        for r in self.rows:
            counts = ("calls", "cached", "tokens_in", "exact_in", "max_out", "estimated")
            for name in (*counts, "unbounded"):
                setattr(total, name, getattr(total, name) + getattr(r, name))
            for name in ("cost_low", "cost_high"):
                mine, theirs = getattr(total, name), getattr(r, name)
                setattr(total, name, None if mine is None or theirs is None else mine + theirs)
            total.unpriced += [m for m in r.unpriced if m not in total.unpriced]
        return total

    def as_dict(self) -> dict[str, Any]:
        return {
            "config_hash": self.config_hash,
            "units": self.units,
            "what": self.what,
            "rows": [r.__dict__ for r in self.rows],
            "total": self.total().__dict__,
            "notes": self.notes,
        }


def _replay(
    plan: Plan, stage: str, client: PlanningClient, items: list[Any], one: Callable[[Any], Any]
) -> list[Any]:
    """Each item through `one` on `client`, its calls added to its method's row."""
    results = []
    for method, item in items:
        client.start_unit()
        before = len(client.planned)
        results.append(one(item))
        for call in client.planned[before:]:
            plan.row(stage, method).add(call)
    return results


def plan_run(settings: Settings) -> Plan:
    """The generate and score stages of a run under `settings`, planned (module doc)."""
    plan = Plan(settings.config_hash())
    with open_warehouse(settings) as wh:
        papers = load_papers(wh)
        ready, qa = ready_samples(wh, settings)
        pack = load_pack(wh, settings.dataset_version)
        done = succeeded_generations(wh)
        samples = {s.sample_id: s for s in ready}
        existing = load_generations(wh, list(samples))
        scored = scored_generations(wh)
        judged = judged_pairs(wh)
    llm = PlanningClient(make_client(settings))
    work = generation_work(settings, llm, papers, ready, pack, done)
    plan.units = len(work)
    embedder = Embedder(settings.embedding, settings.data_dir)
    methods = {}
    for name, point, _ in work:
        at = settings.with_overrides(dict(point)) if point else settings
        methods[name, point] = get_method(name, at.generate, at.llm, at.embedding)

    def generate(item: Any) -> Generation:
        name, point, unit = item
        return methods[name, point].run(unit, llm, embedder, pack)

    items = [(methods[n, p].variant, (n, p, u)) for n, p, u in work]
    made = _replay(plan, "generate", llm, items, generate)
    # What the run scores: the new generations (the stand-ins' in their place) and those
    # the warehouse holds unscored.
    new = [g for g in made if not g.error]
    todo = [g for g in existing if g.generation_id not in scored] + new
    judge = PlanningClient(make_judge_client(settings), llm.asked)
    scorers = [get_scorer(name) for name in available_scorers()]

    def score(g: Generation) -> None:
        sample = samples[g.sample_id]
        approved = [p for p in qa.get(g.sample_id, []) if p.status == "approved"]
        context = ScoreContext(
            g, sample, [papers[p] for p in sample.paper_ids], approved, judge, pack, settings
        )
        for scorer in scorers:
            try:
                scorer(context)
            except Exception:  # a stand-in reply a scorer cannot use: its calls are counted
                continue

    _replay(plan, "score", judge, [(g.variant or g.method, g) for g in todo], score)
    pairs = winrate_pairs(settings, [*existing, *new], judged)
    _replay(
        plan,
        "score",
        judge,
        [(f"winrate {a.variant or a.method}", (a, b)) for a, b in pairs],
        lambda pair: judge_pair(pair[0], pair[1], judge, pack, settings.judge),
    )
    if settings.stats.judge_repeats:
        plan.notes.append(
            f"--judge-repeats {settings.stats.judge_repeats}: the judge's repeats are not planned"
        )
    if any(c.estimated for c in llm.planned + judge.planned):
        plan.notes.append(
            "estimated: a call after the first one a unit sends reads what the model wrote "
            "before it (lilo's offline engine stood in): the calls of multi-step methods, and "
            "judging a summary not yet written, are counted from the method's structure"
        )
    return plan


def plan_probe(task_name: str, settings: Settings) -> Plan:
    """A probe run under `settings` planned (`lilo probe TASK --dry-run`): every answer it
    would ask, each asked of a `PlanningClient`, in rows per probe set."""
    from lilo.flows.probe import probe_work

    plan = Plan(settings.config_hash(), what="answers to ask")
    llm = PlanningClient(make_client(settings))
    report = StageReport(f"probe-{task_name}", "dry-run")
    _, units, prompts = probe_work(
        get_probe_task(task_name),
        settings,
        llm,
        Embedder(settings.embedding, settings.data_dir),
        report,
    )
    plan.units = len(units)
    items = [(f"{task_name} {u.variant}", u) for u in units]
    _replay(plan, "probe", llm, items, lambda u: ask(u, prompts, llm))
    plan.notes += report.notes
    return plan


def _plan_path(settings: Settings, config_hash: str) -> Path:
    return settings.cache_dir / "plans" / f"{config_hash}.json"


def keep_plan(settings: Settings, plan: Plan) -> Path:
    """The plan beside the cache, under the run's config hash, for the real run's summary."""
    path = _plan_path(settings, plan.config_hash)
    path.parent.mkdir(parents=True, exist_ok=True)
    write_atomic(path, json.dumps(plan.as_dict(), indent=1), settings.data_dir)
    return path


def kept_plan(settings: Settings, config_hash: str) -> dict[str, Any] | None:
    """The plan a dry run with the same settings kept, if any."""
    path = _plan_path(settings, config_hash)
    try:
        kept = json.loads(path.read_text())
    except (OSError, ValueError):
        return None
    return kept if isinstance(kept, dict) else None


def _cost(r: dict[str, Any]) -> str:
    low, high = r["cost_low"], r["cost_high"]
    if low is None or high is None:
        return f"cost unknown (no price for {', '.join(r['unpriced'])})"
    if r["unbounded"] and high:
        return f"cost at least {low:.4g}, no upper bound"
    return f"cost {low:.4g} to {high:.4g}" if high else "cost 0"


def format_plan(plan: dict[str, Any]) -> list[str]:
    """The plan as the CLI prints it, one line per stage and method, then the total."""
    what = plan.get("what", "generations to make")
    lines = [f"dry run: {plan['units']} {what}; no call is sent"]
    for r in [*plan["rows"], plan["total"]]:
        send = r["calls"] - r["cached"]
        how = "exact" if r["exact_in"] == r["tokens_in"] else "estimated"
        more = f", {r['estimated']} of them estimated" if r["estimated"] else ""
        out = f"at most {r['max_out']:,} out"
        if r["unbounded"]:
            out += f" ({r['unbounded']} calls send no max_tokens: the server's limit holds)"
        lines.append(
            f"  {r['stage']:<8} {r['method']:<26} {r['calls']:>5} calls, {r['cached']} cached "
            f"(free), {send} to send{more}: {r['tokens_in']:,} tokens in ({how}), {out}; "
            f"{_cost(r)}"
        )
    lines += [f"  note: {n}" for n in plan["notes"]]
    return lines
