"""The RAL-Writer paper's published numbers (`published.csv`: Table 2's Overall on
Qwen2.5-14B-Instruct, Table 4's input tokens per summary), each row naming its source,
and lilo's numbers beside them for the same method, length and metric. The paper's
per-length Table 2 values are not in the repository; only what `published.csv` holds is
compared."""

from __future__ import annotations

import io
from importlib import resources

import pandas as pd

__all__ = ["beside_published", "published_numbers"]


def published_numbers() -> pd.DataFrame:
    """Columns: table, backbone, method, target_words (0: Overall), metric, value, source."""
    text = (resources.files(__package__) / "published.csv").read_text()
    return pd.read_csv(io.StringIO(text))


def _same_backbone(published: str, lilo: str) -> bool:
    """lilo's backbone (`backend:model`) names the paper's model, e.g.
    `openai:Qwen/Qwen2.5-14B-Instruct` for Qwen2.5-14B-Instruct."""
    return published.lower() in lilo.lower()


def beside_published(lilo: pd.DataFrame, table: str) -> pd.DataFrame:
    """`lilo` (method, target_words, backbone, metric, value) joined to the published rows of
    `table` on method, length and metric: published, lilo, difference (lilo - published) and
    whether the backbones match (a difference across backbones is a comparison of models)."""
    paper = published_numbers()
    paper = paper[paper["table"] == table].rename(
        columns={"value": "published", "backbone": "published_backbone"}
    )
    found = lilo.rename(columns={"value": "lilo", "backbone": "lilo_backbone"})
    both = paper.merge(found, on=["method", "target_words", "metric"], how="left")
    both["difference"] = (both["lilo"] - both["published"]).round(2)
    both["same_backbone"] = [
        isinstance(b, str) and _same_backbone(p, b)
        for p, b in zip(both["published_backbone"], both["lilo_backbone"], strict=True)
    ]
    columns = ["method", "target_words", "metric", "published", "published_backbone", "lilo"]
    return both[columns + ["lilo_backbone", "difference", "same_backbone", "source"]]
