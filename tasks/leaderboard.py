"""The leaderboard of one result version, as the paper's Table 2 shows it: a row per method
(variant), for each length S_l, S_c, S_q (x100) and n scored/expected, then Overall (each
score's per-length means averaged over the lengths run; see
warehouse/models/res_leaderboard.sql). `lilo leaderboard`, the runs' summaries, the report
and the Prefect artifacts all lay it out from here; warehouse/queries/results.py reads it.

`wide` is Table 2's layout; `stacked` puts each length (and Overall) on its own row, for
terminals too narrow for the wide one: numbers are never cut, only method names wrap.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

import pandas as pd

__all__ = ["SCORES", "Board", "length_label"]

SCORES = ("S_l", "S_c", "S_q", "n")
OVERALL = "Overall"


@dataclass(frozen=True)
class Board:
    """One result version's leaderboard rows (`res_leaderboard`, version included)."""

    version: int
    dataset_version: str
    partial: bool
    published: bool
    rows: pd.DataFrame

    @property
    def lengths(self) -> list[int]:
        return sorted({int(n) for n in self.rows["target_words"]})

    @property
    def backbones(self) -> list[str]:
        return sorted(set(self.rows["backbone"]))

    @property
    def judges(self) -> list[str]:
        return sorted({j for v in self.rows["judge"].dropna() for j in str(v).split(", ")})

    def title(self) -> str:
        partial = " (PARTIAL)" if self.partial else ""
        return (
            f"Leaderboard: dataset {self.dataset_version}, result version {self.version}"
            f"{partial}; backbone {', '.join(self.backbones) or '-'}; "
            f"judge {', '.join(self.judges) or '-'}; x100"
        )

    def caption(self) -> str:
        lengths = ", ".join(length_label(n) for n in self.lengths)
        return (
            "S_l length, S_c consistency, S_q quality: means over the scored summaries; "
            f"n: scored/expected; {OVERALL}: each score's mean over {lengths or 'the lengths'}"
        )

    def _names(self) -> list[str]:
        return ["method", "backbone"] if len(self.backbones) > 1 else ["method"]

    def _groups(self) -> list[tuple[tuple[str, ...], pd.DataFrame]]:
        keys = ["variant", "backbone"]
        groups = self.rows.groupby(keys, sort=False)
        named = [(str(v), str(b)) for v, b in groups.groups]
        width = len(self._names())
        return [(name[:width], groups.get_group(name)) for name in named]

    def wide(self) -> tuple[list[str], list[list[str]]]:
        """Table 2: (header, rows), a row per method with each length's S_l, S_c, S_q, n and
        then Overall's."""
        header = self._names() + [
            f"{label} {score}"
            for label in [*map(length_label, self.lengths), OVERALL]
            for score in SCORES
        ]
        body = []
        for names, group in self._groups():
            by_length = {int(r.target_words): r for r in group.itertuples()}
            cells = []
            for n in self.lengths:
                row = by_length.get(n)
                cells += _cells(row) if row is not None else ["-"] * len(SCORES)
            body.append([*names, *cells, *_overall(group)])
        return header, body

    def stacked(self) -> tuple[list[str], list[list[str]]]:
        """(header, rows), a row per method and length, then the method's Overall row; the
        method named on its first row only."""
        header = [*self._names(), "length", *SCORES]
        body = []
        for names, group in self._groups():
            for i, row in enumerate(group.itertuples()):
                shown = names if i == 0 else ("",) * len(names)
                body.append([*shown, length_label(int(row.target_words)), *_cells(row)])
            body.append([*("",) * len(names), OVERALL, *_overall(group)])
        return header, body

    def records(self) -> list[dict[str, Any]]:
        """The view's rows as plain values (NULL as None), for CSV and JSON."""
        return [
            {k: _plain(v) for k, v in row.items()} for row in self.rows.to_dict(orient="records")
        ]

    def markdown(self) -> str:
        """Title, Table 2 as a pipe table, caption."""
        header, body = self.wide()
        lines = [
            f"**{self.title()}**",
            "",
            "| " + " | ".join(header) + " |",
            "|"
            + "|".join("---" if i < len(self._names()) else "---:" for i in range(len(header)))
            + "|",
            *("| " + " | ".join(_md(c) for c in row) + " |" for row in body),
            "",
            f"_{self.caption()}_",
        ]
        return "\n".join(lines) + "\n"


def length_label(words: int) -> str:
    """4000 -> 4k, 16000 -> 16k, 4500 -> 4500."""
    return f"{words // 1000}k" if words >= 1000 and words % 1000 == 0 else str(words)


def _number(value: Any) -> str:
    return (
        "-" if value is None or (isinstance(value, float) and math.isnan(value)) else f"{value:.1f}"
    )


def _cells(row: Any) -> list[str]:
    return [_number(row.s_l), _number(row.s_c), _number(row.s_q), f"{row.scored}/{row.expected}"]


def _overall(group: pd.DataFrame) -> list[str]:
    first = group.iloc[0]
    n = f"{int(group['scored'].sum())}/{int(group['expected'].sum())}"
    return [_number(first[f"overall_{s.lower()}"]) for s in SCORES[:3]] + [n]


def _plain(value: Any) -> Any:
    if value is None or (isinstance(value, float) and math.isnan(value)):
        return None
    return value.item() if hasattr(value, "item") else value


def _md(cell: str) -> str:
    return cell.replace("|", "\\|")
