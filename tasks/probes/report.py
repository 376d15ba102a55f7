"""The probes as people look at them: the U-curves (accuracy by gold position, one line per
size, the closed-book and oracle baselines as horizontal lines, as the paper's Figures 1, 5
and 7 draw them; beside each line the accuracy of the replies that do not echo the prompt,
the positions whose accuracy echoes carry ringed), a static HTML page per probe result version
(tasks/results_report/templates/probes.html.j2)
and the run's Prefect artifacts (flows publish them)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pandas as pd

from lilo.tasks.formatting import Artifact, markdown_table, table_records
from lilo.tasks.probes.kinds import get_probe_task
from lilo.tasks.probes.published import PUBLISHED_TITLE, beside_published
from lilo.tasks.results_report import data_uri, figure_png, pyplot, render_template

__all__ = ["echo_carried_lines", "probe_artifacts", "probe_curve_png", "render_probe_report"]

_COLOURS = ("#1f77b4", "#d62728", "#2ca02c", "#9467bd", "#ff7f0e", "#17becf")
_MARKERS = ("o", "s", "^", "D", "v", "P")
_PANEL = ["task", "variant", "backbone", "query_aware", "prompts"]


def _panels(curve: pd.DataFrame) -> list[tuple[tuple[Any, ...], pd.DataFrame]]:
    return [(k, g) for k, g in curve.groupby(_PANEL, sort=True)]


def probe_curve_png(curve: pd.DataFrame) -> bytes:
    """One panel per task x data variant x backbone x prompt form: accuracy against the
    gold item's position (1-based, as the paper labels it), a line per size with its 95%
    interval as a band, the non-echo accuracy as a thin dash-dot line of its colour and the
    echo-carried positions ringed; the closed-book (dashed) and oracle (dotted) accuracies
    as horizontal lines."""
    plt = pyplot()
    panels = _panels(curve)
    columns = min(3, max(1, len(panels)))
    rows = (len(panels) + columns - 1) // columns
    fig, axes = plt.subplots(
        rows, columns, figsize=(4.6 * columns, 3.9 * rows), dpi=100, squeeze=False
    )
    for ax, ((task, variant, backbone, query_aware, prompts), group) in zip(
        axes.flat, panels, strict=False
    ):
        lines = group[group["setting"] == "position"]
        ringed = False
        for i, (size, line) in enumerate(lines.groupby("size")):
            line = line.sort_values("position")
            x = line["position"] + 1
            style = {"color": _COLOURS[i % len(_COLOURS)], "marker": _MARKERS[i % len(_MARKERS)]}
            ax.plot(x, line["accuracy"], label=f"{size} {get_probe_task(task).unit}", **style)
            ax.fill_between(x, line["ci_low"], line["ci_high"], alpha=0.12, color=style["color"])
            if line["non_echo_accuracy"].notna().any():
                ax.plot(
                    x,
                    line["non_echo_accuracy"],
                    color=style["color"],
                    linestyle="-.",
                    linewidth=0.9,
                    label=f"{size} {get_probe_task(task).unit}, replies that do not echo",
                )
            carried = line[line["echo_carried"].fillna(False).astype(bool)]
            if not carried.empty:
                ax.scatter(
                    carried["position"] + 1,
                    carried["accuracy"],
                    s=160,
                    facecolors="none",
                    edgecolors="#000",
                    linewidths=1.2,
                    zorder=3,
                    label="_" if ringed else "accuracy carried by echoes",
                )
                ringed = True
        for setting, dash, label in (
            ("closed_book", "--", "closed-book"),
            ("oracle", ":", "oracle"),
        ):
            base = group[(group["setting"] == setting) & (group["n"] > 0)]
            if not base.empty:
                value = float((base["accuracy"] * base["n"]).sum() / base["n"].sum())
                ax.axhline(
                    value,
                    color="#555",
                    linestyle=dash,
                    linewidth=1.2,
                    label=f"{label} ({value:.2f})",
                )
        aware = ", query-aware" if query_aware else ""
        title = f"{get_probe_task(task).title}: {variant}{aware}\n{backbone}, prompts: {prompts}"
        ax.set_title(title, fontsize=9)
        if lines["size"].nunique() == 1:  # the positions asked; several sizes: the default
            ax.set_xticks(sorted({int(p) + 1 for p in lines["position"]}))
        ax.set_xlabel("position of the gold item (1 = first)")
        ax.set_ylabel("accuracy")
        ax.set_ylim(-0.03, 1.03)
        ax.grid(alpha=0.3)
        ax.legend(fontsize=7, frameon=False, loc="lower left")
    for ax in list(axes.flat)[len(panels) :]:
        ax.set_visible(False)
    fig.tight_layout()
    return figure_png(fig)


def _rows(df: pd.DataFrame) -> list[list[str]]:
    def cell(v: Any) -> str:
        if v is None or (isinstance(v, float) and pd.isna(v)):
            return "–"
        if isinstance(v, float):
            return f"{v:.0f}" if v.is_integer() and abs(v) > 1 else f"{v:.4g}"
        return str(v)

    return [[cell(v) for v in r] for r in df.astype(object).itertuples(index=False)]


def echo_carried_lines(curve: pd.DataFrame) -> list[str]:
    """One line per curve (task, size, variant, prompt form, backbone) with positions, or
    baselines, whose accuracy echoes carry (`echo_carried` of probe_curve; positions 0-based,
    as the view's)."""
    if curve.empty:
        return []
    carried = curve[curve["echo_carried"].fillna(False).astype(bool)]
    lines = []
    keys = ["task", "size", "variant", "query_aware", "prompts", "backbone"]
    for (task, size, variant, query_aware, prompts, backbone), group in carried.groupby(keys):
        where = [
            f"position {int(r.position)}" if r.setting == "position" else str(r.setting)
            for r in group.itertuples()
        ]
        aware = ", query-aware" if query_aware else ""
        lines.append(
            f"{get_probe_task(task).title}, {size} {get_probe_task(task).unit}, {variant}"
            f"{aware}, prompts {prompts}, {backbone}: {', '.join(where)}"
        )
    return lines


def render_probe_report(
    version: int, curve: pd.DataFrame, summary: pd.DataFrame, versus: pd.DataFrame
) -> str:
    """The version's page: the figure, the echo-carried positions, probe_summary,
    probe_vs_summary, probe_curve and the published accuracies beside lilo's
    (tasks/probes/published.py)."""
    figure = data_uri(probe_curve_png(curve)) if not curve.empty else ""
    tables = [
        ("summary", "U depth per curve (probe_summary)", summary),
        ("versus", "Probes beside the summaries' position curve (probe_vs_summary)", versus),
        ("curve", "Accuracy by gold position, with 95% intervals (probe_curve)", curve),
        ("published", PUBLISHED_TITLE, beside_published(curve)),
    ]
    return render_template(
        "probes.html.j2",
        title=f"lilo probes, version {version}",
        version=version,
        figure=figure,
        echo_carried=echo_carried_lines(curve),
        tables=[(key, title, list(df.columns), _rows(df)) for key, title, df in tables],
    )


def probe_artifacts(
    version: int, curve: pd.DataFrame, summary: pd.DataFrame, report: Path
) -> list[Artifact]:
    """The curve and summary as tables, the U-curves as a Markdown image (`probe-curve-plot`)."""
    v = f"probe result version {version}"
    artifacts = [
        Artifact("probe-curve", f"Probe accuracy, {v}", table=table_records(curve)),
        Artifact("probe-summary", f"Probe U depth per curve, {v}", table=table_records(summary)),
    ]
    if not curve.empty:
        image = data_uri(probe_curve_png(curve))
        artifacts.append(
            Artifact(
                "probe-curve-plot",
                f"Probe U-curves, {v}",
                markdown=f"# Lost-in-the-middle probes, {v}\n\n![probe U-curves]({image})\n\n"
                f"{_carried_markdown(curve)}{markdown_table(summary)}\n\nReport: `{report}`\n",
            )
        )
    return artifacts


def _carried_markdown(curve: pd.DataFrame) -> str:
    lines = echo_carried_lines(curve)
    if not lines:
        return ""
    items = "".join(f"- {line}\n" for line in lines)
    head = "Accuracy carried by echoes (most correct replies echo the prompt; positions 0-based)"
    return f"{head}:\n\n{items}\n"
