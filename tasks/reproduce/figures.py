"""The RAL-Writer paper's Figures 6a, 6b, 7a, 7b and 8 drawn from lilo's views, as PNG bytes.
Each takes the view's rows (ral_sweep, output_lengths, position_curve, position_permutation)
and draws nothing it does not hold: an empty frame gives a figure that says so."""

from __future__ import annotations

from typing import Any

import pandas as pd

from lilo.tasks.results_report import figure_png, pyplot

__all__ = ["fig6a_png", "fig6b_png", "fig7a_png", "fig7b_png", "fig8_png", "position_lines"]


def _png(fig: Any) -> bytes:
    fig.tight_layout()
    return figure_png(fig, dpi=90)


def _empty(ax: Any, what: str) -> None:
    ax.text(0.5, 0.5, f"no rows: {what}", ha="center", va="center", transform=ax.transAxes)
    ax.set_axis_off()


def fig6a_png(sweep: pd.DataFrame, k: int = 12) -> bytes:
    """S_c heatmap of RAL-Writer over a (rows) x b (columns) at `k`."""
    plt = pyplot()
    fig, ax = plt.subplots(figsize=(4.6, 3.6))
    rows = sweep[sweep["k"] == k]
    if rows.empty:
        _empty(ax, f"RAL-Writer at k={k} over a x b")
        return _png(fig)
    grid = rows.pivot_table(index="a", columns="b", values="s_c", aggfunc="mean")
    image = ax.imshow(grid.to_numpy(), cmap="viridis", aspect="auto")
    ax.set_xticks(range(len(grid.columns)), [f"{b:g}" for b in grid.columns])
    ax.set_yticks(range(len(grid.index)), [f"{a:g}" for a in grid.index])
    for (i, j), value in pd.DataFrame(grid.to_numpy()).stack().items():
        # Dark text on the light end of the colour map, white on the dark end.
        light = image.norm(value) > 0.5
        colour = "black" if light else "white"
        ax.text(j, i, f"{value:.1f}", ha="center", va="center", color=colour, fontsize=9)
    ax.set_xlabel("b (position bias weight)")
    ax.set_ylabel("a (position bias exponent)")
    ax.set_title(f"Figure 6a: S_c of RAL-Writer, k={k}")
    fig.colorbar(image, ax=ax, label="S_c")
    return _png(fig)


def fig6b_png(sweep: pd.DataFrame, baseline: dict[str, float], a: float, b: float) -> bytes:
    """S_c single, cross and average of RAL-Writer by k at (a, b); AgentWrite's dashed."""
    plt = pyplot()
    fig, ax = plt.subplots(figsize=(5.2, 4.4))
    rows = sweep[(sweep["a"] == a) & (sweep["b"] == b)].sort_values("k")
    if rows.empty:
        _empty(ax, f"RAL-Writer at a={a:g}, b={b:g} over k")
        return _png(fig)
    for column, label, colour in (
        ("s_single", "single", "#1f77b4"),
        ("s_cross", "cross", "#d62728"),
        ("s_c", "average", "#2ca02c"),
    ):
        ax.plot(rows["k"], rows[column], marker="o", color=colour, label=f"RAL-Writer {label}")
        if column in baseline:
            ax.axhline(baseline[column], linestyle="--", color=colour, label=f"AgentWrite {label}")
    ax.set_xticks(rows["k"].tolist())
    ax.set_xlabel("k (chunks restated)")
    ax.set_ylabel("S_c (x100)")
    ax.set_title(f"Figure 6b: S_c by k, a={a:g}, b={b:g}")
    ax.legend(fontsize=7, ncol=2, loc="upper center", bbox_to_anchor=(0.5, -0.2))
    return _png(fig)


def fig7a_png(lengths: pd.DataFrame, variant: str = "single") -> bytes:
    """Output words of `variant` per required length: mean with std error bars, per
    backbone, against the required length (dotted)."""
    plt = pyplot()
    fig, ax = plt.subplots(figsize=(5.2, 3.6))
    rows = lengths[lengths["variant"] == variant]
    if rows.empty:
        _empty(ax, f"{variant} output lengths")
        return _png(fig)
    for backbone, part in rows.groupby("backbone"):
        part = part.sort_values("target_words")
        ax.errorbar(
            part["target_words"], part["words"], yerr=part["words_std"], marker="o",
            capsize=4, label=str(backbone),
        )  # fmt: skip
    targets = sorted(rows["target_words"].unique())
    # Marked: with one length the line is a single point.
    ax.plot(targets, targets, linestyle=":", marker="x", color="grey", label="required")
    ax.set_xticks(targets, [f"{t // 1000}k" if t >= 1000 else str(t) for t in targets])
    ax.set_xlabel("required length (words)")
    ax.set_ylabel("words written")
    ax.set_title(f"Figure 7a: output length of {variant}")
    ax.legend(fontsize=7)
    return _png(fig)


def position_lines(
    rows: pd.DataFrame, value: str, spread: str | None = None
) -> list[tuple[str, list[int], list[float], list[float] | None]]:
    """(label, positions, values, spreads) of each line a position figure draws: one per
    method, and per length when the rows hold several (one line through two lengths would
    zigzag between them at each position)."""
    several = rows["target_words"].nunique() > 1
    lines = []
    for (variant, words), part in rows.groupby(["method", "target_words"]):
        part = part.sort_values("position")
        label = f"{variant}, {words} words" if several else str(variant)
        errors = part[spread].astype(float).tolist() if spread else None
        lines.append(
            (
                label,
                part["position"].astype(int).tolist(),
                part[value].astype(float).tolist(),
                errors,
            )
        )
    return lines


def _by_position(ax: Any, rows: pd.DataFrame, value: str, spread: str | None = None) -> None:
    """The `position_lines`, with `spread` as error bars. S_single is drawn from 0: an axis
    starting at the lowest point would make a few points of noise look like a curve."""
    for label, positions, values, errors in position_lines(rows, value, spread):
        ax.errorbar(positions, values, yerr=errors, marker="o", capsize=3, label=label)
    ax.set_xticks(sorted(rows["position"].unique()))
    ax.set_ylim(bottom=0)
    ax.set_ylabel("S_single (x100)")
    # Below the axes: inside, it would hide the lines it names.
    ax.legend(fontsize=7, ncol=2, loc="upper center", bbox_to_anchor=(0.5, -0.2))


def fig7b_png(curve: pd.DataFrame, target_words: int) -> bytes:
    """S_single by the position (1st, 2nd, 3rd...) of the question's paper, per method."""
    plt = pyplot()
    fig, ax = plt.subplots(figsize=(5.2, 4.4))
    rows = curve[curve["target_words"] == target_words]
    if rows.empty:
        _empty(ax, f"position curve at {target_words} words")
        return _png(fig)
    _by_position(ax, rows, "s_single")
    ax.set_xlabel("position of the paper in the input")
    ax.set_title(f"Figure 7b: S_single by position, {target_words} words")
    return _png(fig)


def fig8_png(permutation: pd.DataFrame) -> bytes:
    """S_single of the paper in each slot, averaged over the cyclic orders, with the spread
    over the orders (standard deviation) as error bars."""
    plt = pyplot()
    fig, ax = plt.subplots(figsize=(5.2, 4.4))
    if permutation.empty:
        _empty(ax, "permutation runs")
        return _png(fig)
    _by_position(ax, permutation, "s_single", spread="spread")
    ax.set_xlabel("slot of the paper in the input")
    orders = "/".join(str(int(n)) for n in sorted(permutation["orders"].unique()))
    ax.set_title(f"Figure 8: S_single per slot\nmean ± sd over {orders} cyclic orders")
    return _png(fig)
