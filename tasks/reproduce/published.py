"""The RAL-Writer paper's published numbers (`published.csv`: all 120 values of Table 2 and
all 12 of Table 4, each row naming the table, row and column it was read from, and whether
the paper underlines it as the best of its setting) and the settings and figure results
its text states in words (`statements.csv`, each naming its section). Pure readers, and the
paper's Table 2 checked against itself."""

from __future__ import annotations

import io
from importlib import resources

import pandas as pd

__all__ = [
    "OVERALL_TOLERANCE",
    "PAPER",
    "overall_check",
    "published_numbers",
    "same_backbone",
    "statements",
    "statements_about",
]

PAPER = "RAL-Writer paper (arXiv 2503.06868)"
# Each printed cell is rounded to 0.005, so the mean of three is within 0.005 of the true
# mean and a printed Overall within 0.005 of it: an Overall off its lengths' mean by more
# than 0.01 is not rounding.
OVERALL_TOLERANCE = 0.01


def _read(name: str) -> pd.DataFrame:
    text = (resources.files(__package__) / name).read_text()
    return pd.read_csv(io.StringIO(text), keep_default_na=False)


def published_numbers() -> pd.DataFrame:
    """Columns: table (table2, table4), backbone, method, target_words (0: Overall), metric
    (s_l, s_c, s_q; tokens_in_k), value, marked_best (underlined in the paper), source."""
    numbers = _read("published.csv")
    numbers["value"] = numbers["value"].astype(float)
    numbers["marked_best"] = numbers["marked_best"] == "yes"
    return numbers


def statements() -> pd.DataFrame:
    """Columns: section, about (a figure, a table or `setting`), statement, values, source."""
    return _read("statements.csv")


def statements_about(about: str) -> str:
    """What the paper's text says of `about` (e.g. `Figure 6b`), one sentence per statement
    with its section; empty when it says nothing."""
    rows = statements()
    rows = rows[rows["about"] == about]
    return " ".join(
        f"The paper (§{r['section']}): {r['statement']}: {r['values']}."
        for r in rows.to_dict(orient="records")
    )


def same_backbone(published: str, lilo: str) -> bool:
    """lilo's backbone (`backend:model`) names the paper's model, e.g.
    `openai:Qwen/Qwen2.5-14B-Instruct` for Qwen2.5-14B-Instruct."""
    return published.lower() in lilo.lower()


def overall_check() -> pd.DataFrame:
    """Each of Table 2's Overall cells beside the mean of its three lengths' cells: backbone,
    method, metric, printed, mean_of_lengths (rounded to 2), agrees (within rounding,
    OVERALL_TOLERANCE)."""
    paper = published_numbers()
    paper = paper[paper["table"] == "table2"]
    key = ["backbone", "method", "metric"]
    printed = paper[paper["target_words"] == 0].set_index(key)["value"]
    lengths = paper[paper["target_words"] != 0].groupby(key, sort=False)["value"]
    means = lengths.mean().reindex(printed.index)
    out = pd.DataFrame(
        {"printed": printed, "mean_of_lengths": means.round(2), "lengths": lengths.size()}
    ).reset_index()
    out["agrees"] = (out["printed"] - means.to_numpy()).abs() <= OVERALL_TOLERANCE
    return out
