"""Liu et al.'s published accuracies for the multi-document QA probe (`published_litm.csv`:
Table 1's closed-book and oracle accuracy, Appendix G's Tables 5-7 by gold position with 10,
20 and 30 documents, each row naming its table, row and column), and lilo's probe curve
beside them. The paper tabulates no key-value retrieval accuracy (its Figure 7 draws them),
so none is here. Pure: the published rows and the probe_curve view's rows in, a table out."""

from __future__ import annotations

import io
from importlib import resources

import pandas as pd

__all__ = ["PUBLISHED_TITLE", "beside_published", "published_litm"]

PUBLISHED_TITLE = "Liu et al.'s published multi-document QA accuracy beside lilo's probe"


def published_litm() -> pd.DataFrame:
    """Columns: task, model, setting (position | closed_book | oracle), size (documents; 0
    for a baseline), position (0-based gold index; -1 for a baseline), accuracy (0-1),
    source."""
    text = (resources.files(__package__) / "published_litm.csv").read_text()
    rows = pd.read_csv(io.StringIO(text))
    rows["size"] = rows["size"].fillna(0).astype(int)
    rows["position"] = rows["position"].fillna(-1).astype(int)
    rows["accuracy"] = (rows.pop("accuracy_percent") / 100).round(3)
    return rows


def _baseline(curve: pd.DataFrame, setting: str) -> float | None:
    """A baseline's accuracy over every size lilo asked it at, weighted by n (as the figure
    draws its line)."""
    rows = curve[(curve["setting"] == setting) & (curve["n"] > 0)]
    if rows.empty:
        return None
    return float((rows["accuracy"] * rows["n"]).sum() / rows["n"].sum())


def beside_published(curve: pd.DataFrame) -> pd.DataFrame:
    """Each published accuracy (gold position 1-based, as the paper's figures label it)
    beside lilo's at the same setting, size and position, per lilo panel of the task
    (backbone x data variant, the plain prompt form): accuracy, n and its 95% interval;
    `-` where lilo has not asked that cell."""
    paper = published_litm()
    panels: list[tuple[str, str, pd.DataFrame]] = []
    if not curve.empty:
        asked = curve[(curve["task"] == "mdqa") & ~curve["query_aware"].astype(bool)]
        panels = [(b, v, g) for (b, v), g in asked.groupby(["backbone", "variant"], sort=True)]
    rows = []
    for r in paper.to_dict(orient="records"):
        base = {
            "model": r["model"],
            "setting": r["setting"],
            "documents": r["size"] or "-",
            "gold position": r["position"] + 1 if r["position"] >= 0 else "-",
            "published": r["accuracy"],
        }
        if not panels:
            rows.append({**base, "lilo": None, "lilo n": None, "lilo panel": "-",
                         "source": r["source"]})  # fmt: skip
        for backbone, variant, group in panels:
            if r["setting"] == "position":
                cell = group[
                    (group["setting"] == "position") & (group["size"] == r["size"])
                    & (group["position"] == r["position"])
                ]  # fmt: skip
                value = float(cell["accuracy"].iloc[0]) if len(cell) else None
                n = int(cell["n"].iloc[0]) if len(cell) else None
            else:
                value = _baseline(group, r["setting"])
                n = int(group.loc[group["setting"] == r["setting"], "n"].sum()) or None
            rows.append(
                {**base, "lilo": None if value is None else round(value, 3), "lilo n": n,
                 "lilo panel": f"{backbone}, {variant}", "source": r["source"]}
            )  # fmt: skip
    return pd.DataFrame(rows)
