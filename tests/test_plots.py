"""The position-curve figure holds its whole legend at 1 and 3 target lengths with 1 to 7
methods: the image grows to the legend, whose labels all show (tasks/results_report/_plots.py)."""

from __future__ import annotations

import io

import numpy as np
import pandas as pd
import pytest
from PIL import Image

from lilo.tasks.results_report import position_curve_png

METHODS = ["single", "agentwrite", "compress[extractive]", "ral_writer",
           "agentwrite[corrected]", "compress[llmlingua2]", "ral_writer[no-retrieval]"]  # fmt: skip


def _curve(methods: list[str], lengths: list[int]) -> pd.DataFrame:
    rows = [
        {"method": m, "target_words": n, "position": p, "s_single": 40.0 + 5 * i + p}
        for i, m in enumerate(methods)
        for n in lengths
        for p in (1, 2, 3)
    ]
    return pd.DataFrame(rows)


def _image(png: bytes) -> np.ndarray:
    return np.asarray(Image.open(io.BytesIO(png)).convert("L"))


@pytest.mark.parametrize("lengths", [[4000], [4000, 8000, 16000]])
@pytest.mark.parametrize("n", range(1, 8))
def test_the_legend_is_never_clipped(lengths: list[int], n: int) -> None:
    image = _image(position_curve_png(_curve(METHODS[:n], lengths)))
    # Ink in the last column band: the legend's text, not cut at the image's edge
    # (a clipped legend runs into the edge; a whole one ends just before the margin).
    assert (image[:, -4:] > 250).all(), "something drawn runs into the right edge"
    assert (image[:, -80:] < 128).any(), "no legend at the right"


def test_the_image_grows_with_the_legend_s_labels() -> None:
    short = _image(position_curve_png(_curve(["a", "b"], [4000])))
    long = _image(position_curve_png(_curve(["a" * 30, "b"], [4000])))
    assert long.shape[1] > short.shape[1] + 100


# -- every series its own look, legends beside the data ----------------------------------

SWEEP = ["single", "agentwrite", "compress[extractive]", "ral_writer"] + [
    f"ral_writer[k={k}]" for k in range(2, 26, 2)
]  # 16 variants, as `--sweep generate.ral.k=2,4,...,24` makes them


def _lines(fig) -> dict[str, tuple[str, str, str]]:
    """Each labelled series of the figure's axes: (colour, marker, line style)."""
    from matplotlib.colors import to_hex

    found = {}
    for ax in fig.axes:
        for line in ax.get_lines():
            if not line.get_label().startswith("_"):
                look = (to_hex(line.get_color()), line.get_marker(), line.get_linestyle())
                found.setdefault(line.get_label(), look)
    return found


def _figures(methods: list[str]):
    from lilo.tasks.results_report._plots import (
        consistency_figure,
        cost_figure,
        position_curve_figure,
    )

    lengths = [4000, 8000, 16000]
    board = pd.DataFrame(
        [
            {"variant": m, "target_words": n, "s_c": 50.0 + (i % 3)}  # many on one point
            for i, m in enumerate(methods)
            for n in lengths
        ]
    )
    cost = pd.DataFrame(
        [
            {"method": m, "target_words": n, "tokens_in_per_summary": 1000.0 * n,
             "tokens_out_per_summary": 2.0 * n}
            for m in methods
            for n in lengths
        ]
    )  # fmt: skip
    return {
        "position curve": position_curve_figure(_curve(methods, lengths)),
        "S_c by length": consistency_figure(board),
        "cost": cost_figure(cost),
    }


def test_sixteen_variants_each_have_their_own_look_in_every_figure() -> None:
    import matplotlib.pyplot as plt

    looks = {}
    for name, fig in _figures(SWEEP).items():
        lines = _lines(fig)
        assert sorted(lines) == sorted(SWEEP), name
        assert len(set(lines.values())) == len(SWEEP), f"{name}: two series look alike"
        looks[name] = lines
        plt.close(fig)
    # the same look for a method in every figure
    assert looks["position curve"] == looks["S_c by length"] == looks["cost"]


def test_legends_never_cover_the_data() -> None:
    import matplotlib.pyplot as plt

    for name, fig in _figures(SWEEP[:10]).items():
        fig.canvas.draw()
        renderer = fig.canvas.get_renderer()
        legends = [*fig.legends, *(ax.get_legend() for ax in fig.axes if ax.get_legend())]
        assert len(legends) == 1, name
        box = legends[0].get_window_extent(renderer)
        for ax in fig.axes:
            assert not box.overlaps(ax.get_window_extent(renderer)), name
        plt.close(fig)
