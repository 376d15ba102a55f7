"""The report's figures as PNG bytes. Every figure draws a method with the same colour,
marker and line style, so a reader matches lines across plots; no two of up to 40 methods
(a sweep's variants included) look alike, and series that share a point are drawn side by
side rather than on top of each other. Legends sit to the right of the axes, never over the
data. Several lengths are facets, never one tangle of lines."""

from __future__ import annotations

import functools
import hashlib
import io
import re
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import Any

import pandas as pd

from lilo.tasks.cache import DiskCache, cache_key
from lilo.tasks.config import Settings
from lilo.tasks.records import DatasetStats

__all__ = [
    "cache_figures",
    "consistency_figure",
    "consistency_png",
    "cost_figure",
    "cost_png",
    "figure_png",
    "histogram_png",
    "lengths_figure",
    "lengths_png",
    "position_curve_figure",
    "position_curve_png",
    "pyplot",
]

# Matplotlib's ten "tab10" colours and eight filled markers: the pair (i % 10, i % 8) is
# different for each of 40 methods; past 10, the line style changes too.
_COLOURS = (
    "#1f77b4", "#d62728", "#2ca02c", "#9467bd", "#ff7f0e",
    "#17becf", "#8c564b", "#e377c2", "#7f7f7f", "#bcbd22",
)  # fmt: skip
_MARKERS = ("o", "s", "^", "D", "v", "P", "X", "*")
_LINES = ("-", "--", ":", "-.")


def pyplot() -> Any:
    """matplotlib's pyplot on the Agg backend: figures drawn to PNG, no display needed."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    return plt


def _natural(name: str) -> list[Any]:
    """`ral_writer[k=4]` before `ral_writer[k=12]`: numbers in a name compare as numbers."""
    return [int(part) if part.isdigit() else part for part in re.split(r"(\d+)", name)]


def _order(methods: Iterable[str]) -> list[str]:
    return sorted({str(m) for m in methods}, key=_natural)


def _styles(methods: Iterable[str]) -> dict[str, dict[str, str]]:
    """A colour, a marker and a line style per method, in natural order (stable across
    figures)."""
    return {
        m: {
            "color": _COLOURS[i % len(_COLOURS)],
            "marker": _MARKERS[i % len(_MARKERS)],
            "linestyle": _LINES[i // len(_COLOURS) % len(_LINES)],
        }
        for i, m in enumerate(_order(methods))
    }


def _dodge(methods: Iterable[str], spread: float) -> dict[str, float]:
    """Each method's offset in [-spread/2, spread/2], in natural order: points of several
    methods at one x stand side by side."""
    order = _order(methods)
    if len(order) < 2:
        return dict.fromkeys(order, 0.0)
    return {m: spread * (i / (len(order) - 1) - 0.5) for i, m in enumerate(order)}


def _legend(fig: Any, axes: Any) -> None:
    """One legend for the figure, right of its axes (each method once, in natural order)."""
    shown: dict[str, Any] = {}
    for ax in axes:
        for handle, label in zip(*ax.get_legend_handles_labels(), strict=True):
            shown.setdefault(label, handle)
    labels = sorted(shown, key=lambda label: (label == "required", _natural(label)))
    fig.tight_layout()
    fig.legend(
        [shown[label] for label in labels],
        labels,
        loc="center left",
        bbox_to_anchor=(1.0, 0.5),
        fontsize=8 if len(labels) > 12 else 9,
        frameon=False,
    )


def figure_png(fig: Any, dpi: float | None = None) -> bytes:
    """The figure as PNG bytes (closed after), grown to hold everything drawn (a legend
    outside the axes is never clipped); at the figure's own dpi unless `dpi` is given."""
    buffer = io.BytesIO()
    try:
        fig.savefig(buffer, format="png", dpi=dpi or "figure", bbox_inches="tight", pad_inches=0.1)
    finally:
        pyplot().close(fig)
    return buffer.getvalue()


_DISK: DiskCache | None = None


def cache_figures(settings: Settings) -> None:
    """Keep every figure drawn in this process in the data dir's `cache/figures` too, by
    content: a run whose results did not change shows its figures without drawing them
    again."""
    global _DISK
    _DISK = DiskCache(settings.cache_dir / "figures", settings.data_dir)


@functools.cache
def _code() -> str:
    """This module's source hash: a change to how figures are drawn draws them anew."""
    return hashlib.sha256(Path(__file__).read_bytes()).hexdigest()[:16]


def _drawn_once(key: Callable[[Any], str]) -> Callable[[Callable[[Any], bytes]], Any]:
    """A figure function that keeps its figures by `key(data)`, the content drawn: the last
    few in memory (the report and the run's artifacts show the same figures), every one on
    disk once `cache_figures` names a folder (matplotlib takes ~0.3 s a figure)."""

    def wrap(draw: Callable[[Any], bytes]) -> Callable[[Any], bytes]:
        drawn: dict[str, bytes] = {}

        @functools.wraps(draw)
        def wrapper(data: Any) -> bytes:
            k = cache_key(f"{draw.__name__}\n{_code()}\n{key(data)}")
            if k not in drawn:
                png = _DISK.get_bytes(k, ".png") if _DISK else None
                if png is None:
                    png = draw(data)
                    if _DISK:
                        _DISK.put_bytes(k, png, ".png")
                if len(drawn) >= 4:
                    drawn.pop(next(iter(drawn)))
                drawn[k] = png
            return drawn[k]

        return wrapper

    return wrap


def _frame_key(df: pd.DataFrame) -> str:
    return f"{df.dtypes.to_dict()}\n{df.to_csv(index=False)}"


def _length_label(n: int) -> str:
    return f"{n // 1000}k words" if n >= 1000 and n % 1000 == 0 else f"{n} words"


def _length_axis(ax: Any, targets: list[Any], *, xlabel: str = "", ylabel: str = "") -> None:
    """The required lengths on a log x-axis, one labelled tick each (1k, 2k, ...), on a grid."""
    ax.set_xscale("log")
    ax.set_xticks(targets, [_length_label(int(t)) for t in targets])
    ax.minorticks_off()
    if xlabel:
        ax.set_xlabel(xlabel)
    if ylabel:
        ax.set_ylabel(ylabel)
    ax.grid(alpha=0.3)


@_drawn_once(_frame_key)
def position_curve_png(curve: pd.DataFrame) -> bytes:
    return figure_png(position_curve_figure(curve))


def position_curve_figure(curve: pd.DataFrame) -> Any:
    """S_single by the position of the paper a question is about: one panel per target
    length, one line per method (the "lost in the middle" U, or its absence)."""
    plt = pyplot()
    lengths = sorted(curve["target_words"].unique())
    styles = _styles(curve["method"])
    dodge = _dodge(curve["method"], 0.3)
    fig, axes = plt.subplots(
        1,
        len(lengths),
        figsize=(3.6 * len(lengths) + 0.6, 3.8),
        dpi=100,
        sharey=True,
        squeeze=False,
    )
    for ax, target in zip(axes[0], lengths, strict=True):
        for method, group in curve[curve["target_words"] == target].groupby("method"):
            x = group["position"] + dodge[str(method)]
            ax.plot(x, group["s_single"], label=method, **styles[str(method)])
        ax.set_title(_length_label(int(target)))
        ax.set_xlabel("paper position in the input")
        ax.set_xticks(sorted(curve["position"].unique()))
        ax.grid(alpha=0.3)
    axes[0][0].set_ylabel("S_single (x100)")
    _legend(fig, axes[0])
    return fig


@_drawn_once(_frame_key)
def lengths_png(lengths: pd.DataFrame) -> bytes:
    return figure_png(lengths_figure(lengths))


def lengths_figure(lengths: pd.DataFrame) -> Any:
    """Generated against required words per summary; dashed bars mark the required length."""
    plt = pyplot()
    styles = _styles(lengths["method"])
    targets = sorted(lengths["target_words"].unique())
    fig, ax = plt.subplots(figsize=(6.5, 4.2), dpi=100)
    offsets = _dodge(lengths["method"], 0.04 * min(len(styles), 10))
    for method, group in lengths.groupby("method"):
        x = group["target_words"] * (1 + offsets[str(method)])  # side by side, not on top
        style = {k: v for k, v in styles[str(method)].items() if k != "linestyle"}
        ax.scatter(x, group["words"], label=method, alpha=0.75, s=26, **style)
    for i, t in enumerate(targets):  # the required length, as a bar across its column
        ax.hlines(
            t,
            t * 0.8,
            t * 1.25,
            colors="grey",
            linestyles="--",
            linewidth=1,
            label="required" if i == 0 else None,
        )
    _length_axis(ax, targets, xlabel="required length", ylabel="generated words")
    _legend(fig, [ax])
    return fig


@_drawn_once(_frame_key)
def consistency_png(leaderboard: pd.DataFrame) -> bytes:
    return figure_png(consistency_figure(leaderboard))


def consistency_figure(leaderboard: pd.DataFrame) -> Any:
    """Mean S_c of each method (variant) by target length, as in the leaderboard."""
    plt = pyplot()
    scored = leaderboard.dropna(subset=["s_c"])
    styles = _styles(scored["variant"])
    offsets = _dodge(scored["variant"], 0.04 * min(len(styles), 10))
    targets = sorted(scored["target_words"].unique())
    fig, ax = plt.subplots(figsize=(6.5, 4), dpi=100)
    for variant, group in scored.groupby("variant"):
        x = group["target_words"] * (1 + offsets[str(variant)])
        ax.plot(x, group["s_c"], label=variant, **styles[str(variant)])
    _length_axis(ax, targets, xlabel="required length", ylabel="S_c (x100)")
    _legend(fig, [ax])
    return fig


@_drawn_once(_frame_key)
def cost_png(cost: pd.DataFrame) -> bytes:
    return figure_png(cost_figure(cost))


def cost_figure(cost: pd.DataFrame) -> Any:
    """Input and output tokens per summary, by method and target length."""
    plt = pyplot()
    styles = _styles(cost["method"])
    offsets = _dodge(cost["method"], 0.04 * min(len(styles), 10))
    targets = sorted(cost["target_words"].unique())
    fig, axes = plt.subplots(1, 2, figsize=(9, 3.6), dpi=100)
    for ax, column, title in (
        (axes[0], "tokens_in_per_summary", "input tokens per summary"),
        (axes[1], "tokens_out_per_summary", "output tokens per summary"),
    ):
        for method, group in cost.groupby("method"):
            x = group["target_words"] * (1 + offsets[str(method)])
            ax.plot(x, group[column], label=method, **styles[str(method)])
        _length_axis(ax, targets)
        ax.set_title(title)
    _legend(fig, axes)
    return fig


@_drawn_once(lambda stats: f"{stats.dataset_version}: {stats.input_words}")
def histogram_png(stats: DatasetStats) -> bytes:
    """Input words per sample of the dataset version."""
    plt = pyplot()
    from matplotlib.ticker import MaxNLocator

    fig, ax = plt.subplots(figsize=(6, 3.4), dpi=100)
    ax.hist(stats.input_words, bins=min(20, max(1, stats.samples)), color="#4878a8")
    ax.set_xlabel("input words per sample")
    ax.set_ylabel("samples")
    ax.yaxis.set_major_locator(MaxNLocator(integer=True))
    ax.set_title(f"Dataset {stats.dataset_version}: {stats.samples} samples")
    fig.tight_layout()
    return figure_png(fig)
