"""The report's figures as PNG bytes. Every figure draws a method with the same colour and
marker, so a reader matches lines across plots; several lengths are facets, never one
tangle of lines."""

from __future__ import annotations

import functools
import hashlib
import io
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import Any

import pandas as pd

from lilo.tasks.cache import DiskCache, cache_key
from lilo.tasks.config import Settings
from lilo.tasks.samples.stats import DatasetStats

__all__ = [
    "cache_figures",
    "consistency_png",
    "cost_png",
    "histogram_png",
    "lengths_png",
    "position_curve_png",
]

_COLOURS = ("#1f77b4", "#d62728", "#2ca02c", "#9467bd", "#ff7f0e", "#17becf", "#8c564b")
_MARKERS = ("o", "s", "^", "D", "v", "P", "X")


def _plt() -> Any:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    return plt


def _styles(methods: Iterable[str]) -> dict[str, dict[str, str]]:
    """A colour and a marker per method, in sorted order (stable across figures)."""
    return {
        m: {"color": _COLOURS[i % len(_COLOURS)], "marker": _MARKERS[i % len(_MARKERS)]}
        for i, m in enumerate(sorted(set(methods)))
    }


def _png(fig: Any) -> bytes:
    """The figure as PNG bytes, grown to hold everything drawn (a legend outside the axes
    is never clipped)."""
    buffer = io.BytesIO()
    try:
        fig.tight_layout()
        fig.savefig(buffer, format="png", bbox_inches="tight", pad_inches=0.1)
    finally:
        _plt().close(fig)
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


@_drawn_once(_frame_key)
def position_curve_png(curve: pd.DataFrame) -> bytes:
    """S_single by the position of the paper a question is about: one panel per target
    length, one line per method (the "lost in the middle" U, or its absence)."""
    plt = _plt()
    lengths = sorted(curve["target_words"].unique())
    styles = _styles(curve["method"])
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
            ax.plot(group["position"], group["s_single"], label=method, **styles[str(method)])
        ax.set_title(_length_label(int(target)))
        ax.set_xlabel("paper position in the input")
        ax.set_xticks(sorted(curve["position"].unique()))
        ax.grid(alpha=0.3)
    axes[0][0].set_ylabel("S_single (x100)")
    shown: dict[str, Any] = {}  # every method once, whichever panels it is drawn in
    for ax in axes[0]:
        for handle, label in zip(*ax.get_legend_handles_labels(), strict=True):
            shown.setdefault(label, handle)
    fig.tight_layout()
    fig.legend(
        list(shown.values()),
        list(shown),
        loc="center left",
        bbox_to_anchor=(1.0, 0.5),
        fontsize=9,
        frameon=False,
    )
    return _png(fig)


@_drawn_once(_frame_key)
def lengths_png(lengths: pd.DataFrame) -> bytes:
    """Generated against required words per summary; dashed bars mark the required length."""
    plt = _plt()
    styles = _styles(lengths["method"])
    targets = sorted(lengths["target_words"].unique())
    fig, ax = plt.subplots(figsize=(6.5, 4.2), dpi=100)
    offsets = {m: (i - (len(styles) - 1) / 2) * 0.02 for i, m in enumerate(styles)}
    for method, group in lengths.groupby("method"):
        x = group["target_words"] * (1 + offsets[str(method)])  # side by side, not on top
        ax.scatter(x, group["words"], label=method, alpha=0.75, s=26, **styles[str(method)])
    for i, t in enumerate(targets):  # the required length, as a bar across its column
        ax.hlines(
            t,
            t * 0.85,
            t * 1.15,
            colors="grey",
            linestyles="--",
            linewidth=1,
            label="required" if i == 0 else None,
        )
    ax.set_xscale("log")
    ax.set_xticks(targets, [_length_label(int(t)) for t in targets])
    ax.minorticks_off()
    ax.set_xlabel("required length")
    ax.set_ylabel("generated words")
    ax.legend(fontsize=8, frameon=False, loc="upper left")
    ax.grid(alpha=0.3)
    return _png(fig)


@_drawn_once(_frame_key)
def consistency_png(leaderboard: pd.DataFrame) -> bytes:
    """Mean S_c of each method (variant) by target length, as in the leaderboard."""
    plt = _plt()
    scored = leaderboard.dropna(subset=["s_c"])
    styles = _styles(scored["variant"])
    targets = sorted(scored["target_words"].unique())
    fig, ax = plt.subplots(figsize=(6.5, 4), dpi=100)
    for variant, group in scored.groupby("variant"):
        ax.plot(group["target_words"], group["s_c"], label=variant, **styles[str(variant)])
    ax.set_xscale("log")
    ax.set_xticks(targets, [_length_label(int(t)) for t in targets])
    ax.minorticks_off()
    ax.set_xlabel("required length")
    ax.set_ylabel("S_c (x100)")
    ax.legend(fontsize=8, frameon=False)
    ax.grid(alpha=0.3)
    return _png(fig)


@_drawn_once(_frame_key)
def cost_png(cost: pd.DataFrame) -> bytes:
    """Input and output tokens per summary, by method and target length."""
    plt = _plt()
    styles = _styles(cost["method"])
    targets = sorted(cost["target_words"].unique())
    fig, axes = plt.subplots(1, 2, figsize=(9, 3.6), dpi=100)
    for ax, column, title in (
        (axes[0], "tokens_in_per_summary", "input tokens per summary"),
        (axes[1], "tokens_out_per_summary", "output tokens per summary"),
    ):
        for method, group in cost.groupby("method"):
            ax.plot(group["target_words"], group[column], label=method, **styles[str(method)])
        ax.set_xscale("log")
        ax.set_xticks(targets, [_length_label(int(t)) for t in targets])
        ax.minorticks_off()
        ax.set_title(title)
        ax.grid(alpha=0.3)
    axes[1].legend(fontsize=8, frameon=False)
    return _png(fig)


@_drawn_once(lambda stats: f"{stats.dataset_version}: {stats.input_words}")
def histogram_png(stats: DatasetStats) -> bytes:
    """Input words per sample of the dataset version."""
    plt = _plt()
    from matplotlib.ticker import MaxNLocator

    fig, ax = plt.subplots(figsize=(6, 3.4), dpi=100)
    ax.hist(stats.input_words, bins=min(20, max(1, stats.samples)), color="#4878a8")
    ax.set_xlabel("input words per sample")
    ax.set_ylabel("samples")
    ax.yaxis.set_major_locator(MaxNLocator(integer=True))
    ax.set_title(f"Dataset {stats.dataset_version}: {stats.samples} samples")
    return _png(fig)
