"""The runs that regenerate the RAL-Writer paper's tables and figures (docs/design.md §1,
§16), and what they will cost before they start. Pure: settings values and earlier runs'
numbers in, a plan and an estimate out."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import pandas as pd

__all__ = ["Estimate", "PlannedRun", "estimate_units", "figure_length", "plan_runs"]

PAPER_METHODS = ("single", "agentwrite", "compress", "ral_writer")
PAPER_LENGTHS = (4000, 8000, 16000)
# Figure 6a: a x b at the paper's k; Figure 6b: k at a = 10, b = 0.2; both at 8k words.
FIG6A = {"generate.ral.a": [5, 20, 60], "generate.ral.b": [0.1, 0.3, 0.5]}
FIG6B = {"generate.ral.k": [4, 8, 12, 16]}
FIG6B_AT = {"generate.ral.a": 10, "generate.ral.b": 0.2}
FIGURE_LENGTH = 8000
# Output tokens per word of English prose, for the estimate without earlier runs.
_TOKENS_PER_WORD = 1.35


@dataclass(frozen=True)
class PlannedRun:
    name: str
    serves: str
    overrides: dict[str, Any] = field(default_factory=dict)


def figure_length(lengths: tuple[int, ...]) -> int:
    """The paper's Figure 6 length (8k words) when asked for, else the longest asked."""
    return FIGURE_LENGTH if FIGURE_LENGTH in lengths else max(lengths)


def plan_runs(lengths: tuple[int, ...]) -> list[PlannedRun]:
    """Table 2's methods x lengths (which Tables 3 and 4 and Figures 7a and 7b read too), the
    two Figure 6 sweeps of RAL-Writer, and Figure 8's permutations (every cyclic order of
    each sample's papers: as many slots as a sample has papers) with RAL-Writer."""
    at = [figure_length(lengths)]
    return [
        PlannedRun(
            "table2",
            "Table 2, Table 3, Table 4, Figure 7a, Figure 7b",
            {"generate.methods": list(PAPER_METHODS), "generate.target_words": list(lengths)},
        ),
        PlannedRun(
            "fig6a",
            "Figure 6a (a x b)",
            {
                "generate.methods": ["ral_writer"],
                "generate.target_words": at,
                "generate.sweep": FIG6A,
            },
        ),
        PlannedRun(
            "fig6b",
            "Figure 6b (k, AgentWrite as the baseline)",
            {
                "generate.methods": ["ral_writer"],
                "generate.target_words": at,
                "generate.sweep": FIG6B,
                **FIG6B_AT,
            },
        ),
        PlannedRun(
            "fig8",
            "Figure 8 (S_single per slot over the cyclic orders)",
            {
                "generate.methods": ["ral_writer"],
                "generate.target_words": at,
                "generate.permutations": True,
            },
        ),
    ]


@dataclass(frozen=True)
class Estimate:
    """LLM calls and tokens of the generations a run still has to make and of judging them;
    `source` says where the per-summary numbers come from."""

    generations: int
    calls: int
    tokens_in: int
    tokens_out: int
    source: str


def estimate_units(
    units: pd.DataFrame, history: pd.DataFrame, judge: tuple[float, float, float] | None
) -> Estimate:
    """`units`: one row per generation to make (method, target_words, prompt_tokens, steps,
    questions). `history`: earlier generations' means per method and length (calls,
    tokens_in, tokens_out). `judge`: earlier judge calls and tokens per scored generation.
    Without history a unit costs what its prompt sizes say: Single one call reading the
    prompt, a planning method one plan call plus one call per step each reading the prompt
    and what was written; the judge two calls per question plus one per quality aspect."""
    if units.empty:
        return Estimate(0, 0, 0, 0, "nothing left to run")
    known = units.merge(history, on=["method", "target_words"], how="left")
    from_history = known["calls"].notna()
    steps = known["steps"].where(known["method"] != "single", 0)
    out = known["target_words"] * _TOKENS_PER_WORD
    calls = known["calls"].where(from_history, 1 + steps)
    tokens_in = known["tokens_in"].where(
        from_history, known["prompt_tokens"] * (1 + steps) + out * steps / 2
    )
    tokens_out = known["tokens_out"].where(from_history, out)
    if judge:
        j_calls, j_in, j_out = (units.shape[0] * v for v in judge)
    else:
        per = 2 * units["questions"] + 5
        j_calls = float(per.sum())
        j_in = float((per * (units["target_words"] * _TOKENS_PER_WORD)).sum())
        j_out = float(per.sum() * 100)
    sources = []
    if from_history.any():
        sources.append(f"{int(from_history.sum())} from earlier runs (the cost view)")
    if (~from_history).any():
        sources.append(f"{int((~from_history).sum())} from prompt sizes")
    sources.append("judge " + ("from earlier runs" if judge else "from question counts"))
    return Estimate(
        int(units.shape[0]),
        int(round(calls.sum() + j_calls)),
        int(round(tokens_in.sum() + j_in)),
        int(round(tokens_out.sum() + j_out)),
        "; ".join(sources),
    )
