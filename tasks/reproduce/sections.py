"""The report page's tables, shaped from the views' rows (pure). Table 2 carries each cell's
interval and its paired difference with the reference method; Tables 2 and 4 every
published number beside lilo's (tasks/reproduce/published.csv)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import pandas as pd

from lilo.tasks.formatting import fixed
from lilo.tasks.leaderboard import TOO_SMALL
from lilo.tasks.methods._splitter import split_recursive
from lilo.tasks.reproduce.published import published_numbers, same_backbone
from lilo.tasks.reproduce.significance import OVERALL, own_variants

__all__ = ["restated_chunks", "table2", "table2_beside", "table4", "table4_beside"]

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


_PAPER_LENGTHS = (4000, 8000, 16000, OVERALL)
_SCORES = {"length": "S_l", "consistency": "S_c", "quality": "S_q"}


def _lilo_cells(intervals: pd.DataFrame, own: Mapping[str, str] | None) -> pd.DataFrame:
    """Each method's own variant (`own_variants`), with `best`: the highest mean of its
    backbone, length and score."""
    cells = own_variants(intervals, own).copy()
    top = cells.groupby(["backbone", "target_words", "score"])["mean"].transform("max")
    cells["best"] = cells["mean"] == top
    return cells


def _ran_paper_lengths(cells: pd.DataFrame, backbone: str) -> bool:
    return set(_PAPER_LENGTHS) <= set(cells.loc[cells["backbone"] == backbone, "target_words"])


def table2_beside(intervals: pd.DataFrame, own: Mapping[str, str] | None = None) -> pd.DataFrame:
    """Every value of the paper's Table 2 (backbone x method x length, Overall last) beside
    lilo's cell on the same backbone: mean [95% interval], n, and lilo minus the paper. A
    backbone lilo has not run keeps the paper's rows alone; a backbone of lilo's that the
    paper did not run follows with lilo's rows alone. `*`: the paper's underlined best of
    its setting; `+`: lilo's best of its setting. lilo's Overall stands beside the paper's
    only when lilo ran the paper's three lengths (else the two are means over other
    lengths). `own`: the variant that stands for each paper method (`own_variants`)."""
    paper = published_numbers()
    paper = paper[paper["table"] == "table2"]
    cells = _lilo_cells(intervals, own)
    by = {
        (r["backbone"], r["method"], int(r["target_words"]), r["score"]): r
        for r in cells.to_dict(orient="records")
    }
    lilo_backbones = sorted(cells["backbone"].unique())
    rows = []
    for backbone in paper["backbone"].unique():
        ran = next((b for b in lilo_backbones if same_backbone(backbone, b)), None)
        mine = paper[paper["backbone"] == backbone]
        for method in mine["method"].unique():
            for target in _PAPER_LENGTHS:
                at = mine[(mine["method"] == method) & (mine["target_words"] == target)]
                published = {r["metric"]: r for r in at.to_dict(orient="records")}
                shown = (
                    ran if target != OVERALL or (ran and _ran_paper_lengths(cells, ran)) else None
                )
                rows.append(_beside_row(backbone, method, target, published, by, shown))
    papers = paper["backbone"].unique()
    for backbone in lilo_backbones:
        if any(same_backbone(p, backbone) for p in papers):
            continue
        mine = cells[cells["backbone"] == backbone]
        targets = sorted({int(t) for t in mine["target_words"]}, key=lambda t: (t == OVERALL, t))
        for method in sorted(mine["method"].unique()):
            for target in targets:
                rows.append(_beside_row(backbone, method, target, {}, by, backbone))
    return pd.DataFrame(rows)


def _beside_row(
    backbone: str,
    method: str,
    target: int,
    published: dict[str, dict[str, Any]],
    by: dict[tuple[str, str, int, str], dict[str, Any]],
    lilo: str | None,
) -> dict[str, object]:
    """One row of `table2_beside`: the paper's three scores, lilo's cell on `lilo` (the
    backbone whose cell stands beside them; None: none) and the differences."""
    row: dict[str, object] = {"backbone": backbone, "method": method, "length": _length(target)}
    n = 0
    for score, name in _SCORES.items():
        p = published.get(_METRIC[score])
        row[f"{name} paper"] = (
            "-" if p is None else f"{p['value']:.2f}" + (" *" if p["marked_best"] else "")
        )
        cell = by.get((lilo, method, target, score)) if lilo else None
        if cell is None:
            row[f"{name} lilo"] = row[f"{name} lilo - paper"] = "-"
            continue
        mark = " +" if cell["best"] else ""
        row[f"{name} lilo"] = _with_interval(cell["mean"], cell["ci_low"], cell["ci_high"]) + mark
        row[f"{name} lilo - paper"] = (
            "-" if p is None else fixed(float(cell["mean"]) - float(p["value"]), 2, sign=True)
        )
        n = max(n, int(cell["n"]))
    row["n"] = n or "-"
    row["lilo backbone"] = lilo or "-"
    return row


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


def table4_beside(cost: pd.DataFrame) -> pd.DataFrame:
    """All 12 values of the paper's Table 4 (input tokens per summary, x10^3: AgentWrite,
    RAL-Writer and the increase, per length and Overall) beside lilo's from its ledger (the
    cost view) on each backbone lilo ran, the difference, and whether that is the paper's
    backbone. lilo's Overall stands beside the paper's only when lilo ran its three
    lengths."""
    paper = published_numbers()
    paper = paper[paper["table"] == "table4"]
    lilo: dict[tuple[int, str], list[tuple[str, float]]] = {}
    for backbone, part in cost.groupby("backbone"):
        t4 = table4(part).set_index("length")
        ran = {int(t) for t in part["target_words"]}
        for target in _PAPER_LENGTHS:
            length = _length(target)
            if length in t4.index and (target != OVERALL or set(_PAPER_LENGTHS[:3]) <= ran):
                for method in ("agentwrite", "ral_writer", "increase"):
                    lilo.setdefault((target, method), []).append(
                        (str(backbone), float(t4.loc[length, method]))
                    )
    rows = []
    for r in paper.to_dict(orient="records"):
        for backbone, value in lilo.get((int(r["target_words"]), r["method"]), [(None, None)]):
            rows.append(
                {
                    "length": _length(int(r["target_words"])),
                    "method": r["method"],
                    "paper": r["value"],
                    "lilo": value,
                    "lilo - paper": None if value is None else round(value - r["value"], 2),
                    "lilo backbone": backbone or "-",
                    "same backbone": bool(backbone and same_backbone(r["backbone"], backbone)),
                }
            )
    return pd.DataFrame(rows)


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
