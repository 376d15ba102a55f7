"""The position-curve figure holds its whole legend at 1 and 3 target lengths with 1 to 7
methods: the image grows to the legend, whose labels all show (tasks/report/_plots.py)."""

from __future__ import annotations

import io

import numpy as np
import pandas as pd
import pytest
from PIL import Image

from lilo.tasks.report import position_curve_png

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
