"""The leaderboard of one result version, as the paper's Table 2 shows it: a row per method
(variant), for each length each registered leaderboard score (S_l, S_c, S_q, ...; x100;
tasks/scoring/) and n scored/expected, then Overall (each
score's per-length means averaged over the lengths run; see
warehouse/models/res_leaderboard.sql). `lilo leaderboard`, the runs' summaries, the report
and the Prefect artifacts all lay it out from here; warehouse/queries/results.py reads its rows
(`BoardRows`, tasks/report_records.py).

`wide` is Table 2's layout; `stacked` puts each length (and Overall) on its own row, for
terminals too narrow for the wide one: numbers are never cut, only method names wrap. Each
score carries its 95% bootstrap interval over samples (`[low, high]`, beside it or below it
when `below`), and `comparison` lays out each variant's paired difference with the reference
method (`res_paired`, tasks/reproduce/significance.py) for under the table.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, fields
from typing import Any

import pandas as pd

from lilo.tasks.formatting import fixed, pipe_table, unsigned_zero
from lilo.tasks.report_records import BoardRows, Scope, length_label
from lilo.tasks.scoring import leaderboard_scores
from lilo.tasks.stats import LEVEL, fewest_samples

__all__ = ["Board", "comparison", "scope_line", "score_labels"]

OVERALL = "Overall"
TOO_SMALL = "n too small"


def score_labels() -> list[str]:
    """Each length's (and Overall's) columns: the registered leaderboard scores' labels
    (S_l, S_c, S_q, ...; tasks/scoring/), then n scored/expected."""
    return [*(h.label for h in leaderboard_scores()), "n"]


def scope_line(scope: Scope | None) -> str:
    """The scope in one line, or that the version has none recorded."""
    if scope is None:
        return "Scope: not recorded (a result version made before lilo recorded scopes)"
    return scope.line()


@dataclass(frozen=True)
class Board(BoardRows):
    """One result version's leaderboard rows (`res_leaderboard`, version included), laid out."""

    @classmethod
    def of(cls, found: BoardRows) -> Board:
        """The rows the warehouse read (warehouse/queries/results.py `read_board`), to lay out."""
        return cls(**{f.name: getattr(found, f.name) for f in fields(found)})

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

    def scope_line(self) -> str:
        return scope_line(self.scope)

    def caption(self) -> str:
        lengths = ", ".join(length_label(n) for n in self.lengths)
        interval = (
            "; [low, high]: 95% bootstrap interval over samples"
            if self.has_intervals
            else "; no intervals"
        ) + f" (given from {fewest_samples()} samples on)"
        scores = ", ".join(
            f"{h.label} {h.name}{' (a diagnostic, not quality)' if h.diagnostic else ''}"
            for h in leaderboard_scores()
        )
        return (
            f"{scores}: means over the scored summaries; "
            f"n: scored/expected; {OVERALL}: each score's mean over {lengths or 'the lengths'}"
            f"{interval}"
        )

    @property
    def has_intervals(self) -> bool:
        lows = [f"{h.column}_low" for h in leaderboard_scores()]
        return any(c in self.rows.columns and self.rows[c].notna().any() for c in lows)

    def _names(self) -> list[str]:
        return ["method", "backbone"] if len(self.backbones) > 1 else ["method"]

    def _groups(self) -> list[tuple[tuple[str, ...], pd.DataFrame]]:
        keys = ["variant", "backbone"]
        groups = self.rows.groupby(keys, sort=False)
        named = [(str(v), str(b)) for v, b in groups.groups]
        width = len(self._names())
        return [(name[:width], groups.get_group(name)) for name in named]

    def wide(self, below: bool = False) -> tuple[list[str], list[list[str]]]:
        """Table 2: (header, rows), a row per method with each length's S_l, S_c, S_q, n and
        then Overall's; each score's interval beside it, or on the line below."""
        header = self._names() + [
            f"{label} {score}"
            for label in [*map(length_label, self.lengths), OVERALL]
            for score in score_labels()
        ]
        body = []
        for names, group in self._groups():
            by_length = {int(r.target_words): r for r in group.itertuples()}
            cells = []
            for n in self.lengths:
                row = by_length.get(n)
                cells += _cells(row, below) if row is not None else ["-"] * len(score_labels())
            body.append([*names, *cells, *_overall(group, below)])
        return header, body

    def stacked(self, below: bool = False) -> tuple[list[str], list[list[str]]]:
        """(header, rows), a row per method and length, then the method's Overall row; the
        method named on its first row only."""
        header = [*self._names(), "length", *score_labels()]
        body = []
        for names, group in self._groups():
            for i, row in enumerate(group.itertuples()):
                shown = names if i == 0 else ("",) * len(names)
                body.append([*shown, length_label(int(row.target_words)), *_cells(row, below)])
            body.append([*("",) * len(names), OVERALL, *_overall(group, below)])
        return header, body

    def comparison(self) -> tuple[str, list[str], list[list[str]]]:
        """The version's paired comparison with the reference method (`comparison`)."""
        return comparison(self.paired, list(self.rows["variant"]))

    def records(self) -> list[dict[str, Any]]:
        """The view's rows as plain values (NULL as None), for CSV and JSON."""
        return [
            {k: _plain(v) for k, v in row.items()} for row in self.rows.to_dict(orient="records")
        ]

    def paired_records(self) -> list[dict[str, Any]]:
        """The paired comparison's rows as plain values, for JSON."""
        return [
            {k: _plain(v) for k, v in row.items()} for row in self.paired.to_dict(orient="records")
        ]

    def markdown(self, stacked: bool = False) -> str:
        """Title, Table 2 as a pipe table (each length on its own row when `stacked`, for a
        narrow page), caption; then the paired comparison, if any."""
        names = len(self._names())
        lines = [
            f"**{self.title()}**",
            "",
            self.scope_line(),
            "",
            *pipe_table(
                *(self.stacked() if stacked else self.wide()), names + stacked
            ).splitlines(),
            "",
            f"_{self.caption()}_",
        ]
        title, header, body = self.comparison()
        if body:
            lines += ["", f"**{title}**", "", *pipe_table(header, body, 3).splitlines()]
        return "\n".join(lines) + "\n"


def comparison(paired: pd.DataFrame, order: list[str]) -> tuple[str, list[str], list[list[str]]]:
    """(title, header, rows) of `res_paired` rows: per variant (in `order`, the
    leaderboard's), length (Overall last) and score, the mean of variant minus reference over
    the samples both scored, the 95% interval of the sign-flip test ("n too small" below
    `fewest_samples`), its p-value, and `within noise` (p >= 0.05: the test cannot tell the
    two apart; the interval covers zero exactly then; tasks/stats.py). No rows when there is
    no comparison (one method, or the reference not run)."""
    header = ["method", "length", "score", "diff", "95% interval", "p", "within noise"]
    if paired.empty:
        return "", header, []
    rank = {v: i for i, v in enumerate(dict.fromkeys(order))}
    labels = {h.name: h.label for h in leaderboard_scores()}
    paired = paired.assign(
        _variant=paired["variant"].map(rank).fillna(len(rank)),
        _length=paired["target_words"].replace(0, 10**9),
        _score=paired["score"].map(lambda s: list(labels).index(s) if s in labels else len(labels)),
    ).sort_values(["_variant", "variant", "backbone", "_length", "_score"])
    several = paired["backbone"].nunique() > 1
    body = []
    shown = None
    for r in paired.itertuples():
        name = (r.variant, r.backbone)
        label = f"{r.variant} ({r.backbone})" if several else r.variant
        length = OVERALL if r.target_words == 0 else length_label(int(r.target_words))
        body.append(
            [
                label if name != shown else "",
                length,
                labels.get(r.score, r.score),
                _signed(r.difference),
                _interval(r.ci_low, r.ci_high),
                _p(r.p_value),
                "yes" if r.within_noise else "no",
            ]
        )
        shown = name
    references = ", ".join(sorted(set(paired["reference"])))
    title = (
        f"Paired with {references}: diff is the mean of method minus {references} over "
        f"the samples both scored (x100); p: sign-flip test; within noise: p >= {1 - LEVEL:.2f} "
        f"(the interval covers 0); n too small: fewer than {fewest_samples()} samples"
    )
    return title, header, body


def _number(value: Any) -> str:
    return fixed(value)


def _score(values: Any, column: str, below: bool) -> str:
    """A score and, when known, its interval: `52.3 [48.1, 56.0]` (below: on a second line)."""
    text = _number(values[column])
    low, high = values.get(f"{column}_low"), values.get(f"{column}_high")
    if text == "-" or _number(low) == "-" or _number(high) == "-":
        return text
    return f"{text}{chr(10) if below else ' '}[{_number(low)}, {_number(high)}]"


def _cells(row: Any, below: bool = False) -> list[str]:
    values = row._asdict()
    scores = [_score(values, h.column, below) for h in leaderboard_scores()]
    return [*scores, f"{row.scored}/{row.expected}"]


def _overall(group: pd.DataFrame, below: bool = False) -> list[str]:
    first = group.iloc[0].to_dict()
    n = f"{int(group['scored'].sum())}/{int(group['expected'].sum())}"
    return [_score(first, f"overall_{h.column}", below) for h in leaderboard_scores()] + [n]


def _signed(value: Any) -> str:
    return fixed(value, sign=True)


def _interval(low: Any, high: Any) -> str:
    """A difference's interval, or why there is none (tasks/stats.py `fewest_samples`)."""
    if _number(low) == "-" or _number(high) == "-":
        return TOO_SMALL
    return f"[{_signed(low)}, {_signed(high)}]"


def _p(value: Any) -> str:
    if _number(value) == "-":
        return "-"
    return "<0.001" if value < 0.001 else f"{value:.3f}"


def _plain(value: Any) -> Any:
    if value is None or (isinstance(value, float) and math.isnan(value)):
        return None
    return unsigned_zero(value.item() if hasattr(value, "item") else value)
