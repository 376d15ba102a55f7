"""The report page's tables, shaped from the views' rows (pure). Table 2 carries each cell's
interval and its paired difference with the reference method; Tables 2 and 4 the published
numbers beside lilo's."""

from __future__ import annotations

import pandas as pd

from lilo.tasks.formatting import fixed
from lilo.tasks.leaderboard import TOO_SMALL
from lilo.tasks.methods._splitter import split_recursive
from lilo.tasks.reproduce.published import beside_published
from lilo.tasks.reproduce.significance import OVERALL

__all__ = ["restated_chunks", "table2", "table2_published", "table4", "table4_published"]

_METRIC = {"length": "s_l", "consistency": "s_c", "quality": "s_q"}


def _length(n: int) -> str:
    return "Overall" if n == OVERALL else f"{n // 1000}k" if n >= 1000 else str(n)


def table2(intervals: pd.DataFrame) -> pd.DataFrame:
    """`cell_intervals` rows as Table 2: a row per variant x length (Overall last), S_l, S_c,
    S_q with their intervals, n, and S_c's paired difference with the reference, its
    interval and p; `within_noise` marks a difference the data cannot tell from zero."""
    rows = []
    for (variant, target), cell in intervals.groupby(["variant", "target_words"], sort=False):
        by = {r["score"]: r for r in cell.to_dict(orient="records")}
        row: dict[str, object] = {"method": variant, "length": _length(int(target))}
        for score, name in _METRIC.items():
            r = by.get(score)
            row[name] = _with_interval(r["mean"], r["ci_low"], r["ci_high"]) if r else "-"
        c = by.get("consistency", {})
        row["n"] = int(max(r["n"] for r in by.values()))
        diff = c.get("difference")
        row["S_c - reference"] = (
            "-" if diff is None or pd.isna(diff)
            else _with_interval(diff, c["difference_low"], c["difference_high"], sign=True)
        )  # fmt: skip
        row["p"] = c.get("p_value")
        row["within_noise"] = bool(c.get("within_noise") is True)
        rows.append((target == OVERALL, int(target), row))
    rows.sort(key=lambda t: (t[0], t[1]))
    return pd.DataFrame([r for *_, r in rows])


def _with_interval(value: float, low: object, high: object, *, sign: bool = False) -> str:
    """`52.3 [48.1, 56.0]`, or `52.3 (n too small)` where there is no interval."""
    if fixed(low) == "-" or fixed(high) == "-":
        return f"{fixed(value, sign=sign)} ({TOO_SMALL})"
    return f"{fixed(value, sign=sign)} [{fixed(low, sign=sign)}, {fixed(high, sign=sign)}]"


def _method(variant: str) -> str:
    return variant.split("[", 1)[0]


def table2_published(intervals: pd.DataFrame) -> pd.DataFrame:
    """The paper's Table 2 Overall beside lilo's Overall for the same method (a variant's
    base name: `compress[extractive]` is compress)."""
    found = intervals[
        (intervals["target_words"] == OVERALL) & ~intervals["variant"].str.startswith("ral_writer[")
    ]
    lilo = pd.DataFrame(
        {
            "method": found["variant"].map(_method),
            "target_words": OVERALL,
            "backbone": found["backbone"],
            "metric": found["score"].map(_METRIC),
            "value": found["mean"],
        }
    )
    return beside_published(lilo, "table2")


def table4(cost: pd.DataFrame) -> pd.DataFrame:
    """Input tokens per summary (x10^3), AgentWrite and RAL-Writer, per length and Overall,
    and RAL-Writer's increase."""
    rows = cost[cost["method"].isin(["agentwrite", "ral_writer"])]
    grid = rows.pivot_table(
        index="target_words", columns="method", values="tokens_in_per_summary", aggfunc="mean"
    )
    if grid.empty or len(grid.columns) < 2:
        return pd.DataFrame(columns=["length", "agentwrite", "ral_writer", "increase"])
    grid.loc[OVERALL] = grid.mean()
    out = (grid / 1000).round(2)
    out["increase"] = (out["ral_writer"] - out["agentwrite"]).round(2)
    out.index = [_length(int(t)) for t in out.index]
    return out.rename_axis("length").reset_index()


def table4_published(cost: pd.DataFrame) -> pd.DataFrame:
    rows = cost[cost["method"].isin(["agentwrite", "ral_writer"])]
    lilo = pd.DataFrame(
        {
            "method": rows["method"],
            "target_words": rows["target_words"],
            "backbone": rows["backbone"],
            "metric": "tokens_in_k",
            "value": rows["tokens_in_per_summary"] / 1000,
        }
    )
    return beside_published(lilo, "table4")


def restated_chunks(
    instruction: str, chunk_words: int, overlap_words: int, recall: pd.DataFrame, top: int = 3
) -> pd.DataFrame:
    """Table 3: the `top` chunks RAL-Writer restated for one step (rank 1 first), with their
    text, the instruction split again as the method split it (tasks/methods/_splitter.py)."""
    chunks = split_recursive(instruction, chunk_words, overlap_words)
    rows = recall.sort_values("rank").head(top)
    return pd.DataFrame(
        {
            "rank": rows["rank"].to_numpy(),
            "chunk": rows["chunk"].to_numpy(),
            "importance": rows["importance"].round(4).to_numpy(),
            "text": [
                chunks[i][:400] + (" ..." if len(chunks[i]) > 400 else "")
                if 0 <= i < len(chunks) else "(not found)"
                for i in rows["chunk"]
            ],
        }
    )  # fmt: skip
