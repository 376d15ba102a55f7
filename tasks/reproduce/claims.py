"""The RAL-Writer paper's claims about orderings, each checked on the paper's own Table 2 and
on lilo's run: which method ranks first per setting and score, RAL-Writer's S_c above
AgentWrite's at every length (Qwen2.5-32B-Instruct), Single's S_l below the Plan-Write
methods', and S_l falling as the required length grows. lilo's side is a paired sign-flip
test over the samples both cells scored (tasks/stats.py), so a row says whether lilo's run
agrees and how sure it can be. Pure: the published rows and a result version's headline
score rows in, one record per claim and lilo setting out."""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from typing import Any

import pandas as pd

from lilo.tasks.formatting import fixed
from lilo.tasks.leaderboard import TOO_SMALL
from lilo.tasks.reproduce.significance import OVERALL, own_variants, with_overall
from lilo.tasks.stats import Paired, paired_comparison

__all__ = ["COLUMNS", "claims"]

_SCORE = {"s_l": "length", "s_c": "consistency", "s_q": "quality"}
_NAME = {"s_l": "S_l", "s_c": "S_c", "s_q": "S_q"}
PLAN_WRITE = ("agentwrite", "compress", "ral_writer")
COLUMNS = [
    "claim", "paper", "paper_holds", "lilo_backbone", "lilo_setting", "lilo", "agrees",
    "difference", "p", "n", "reproduced",
]  # fmt: skip


def _length(n: int) -> str:
    return "Overall" if n == OVERALL else f"{n // 1000}k" if n >= 1000 else str(n)


class _Lilo:
    """lilo's per-sample values of one result version: each method's own variant
    (`own_variants`), the lengths it ran and Overall."""

    def __init__(self, scores: pd.DataFrame, seed: int, own: Mapping[str, str] | None) -> None:
        data = with_overall(scores) if not scores.empty else scores
        self.data = own_variants(data, own)
        self.seed = seed

    def backbones(self) -> list[str]:
        """lilo's backbones; `-` when it scored nothing (each claim is listed, not run)."""
        return sorted(self.data["backbone"].unique()) if not self.data.empty else ["-"]

    def lengths(self, backbone: str) -> list[int]:
        if self.data.empty:
            return []
        rows = self.data[self.data["backbone"] == backbone]
        return sorted(int(t) for t in rows["target_words"].unique() if t != OVERALL)

    def setting(self, backbone: str, target: int) -> str:
        """`4k`; Overall names the lengths it is the mean of."""
        if target != OVERALL:
            return _length(target)
        ran = self.lengths(backbone)
        return f"Overall ({', '.join(map(_length, ran))})" if ran else "Overall"

    def values(self, backbone: str, method: str, target: int, metric: str) -> pd.Series:
        d = self.data
        if d.empty:
            return pd.Series(dtype=float)
        rows = d[
            (d["backbone"] == backbone) & (d["method"] == method)
            & (d["target_words"] == target) & (d["score"] == _SCORE[metric])
        ]  # fmt: skip
        return rows.set_index("sample_id")["value"].astype(float)

    def mean(self, *key: Any) -> float | None:
        v = self.values(*key)
        return float(v.mean()) if len(v) else None

    def paired(self, a: pd.Series, b: pd.Series) -> Paired | None:
        """a minus b on the samples both scored."""
        both = pd.concat([a.rename("a"), b.rename("b")], axis=1, join="inner")
        if both.empty:
            return None
        return paired_comparison(both["a"].tolist(), both["b"].tolist(), seed=self.seed)


def _record(claim: str, paper: str, holds: bool, backbone: str, setting: str, lilo: str,
            agrees: bool | None, test: Paired | None) -> dict[str, Any]:  # fmt: skip
    if test is None:
        diff, p, n = "-", None, 0
    else:
        d = test.difference
        low, high = fixed(d.low, sign=True), fixed(d.high, sign=True)
        bounds = f"({TOO_SMALL})" if d.too_small else f"[{low}, {high}]"
        diff = f"{fixed(d.mean, sign=True)} {bounds}"
        p, n = round(test.p_value, 4), d.n
    return {
        "claim": claim,
        "paper": paper,
        "paper_holds": holds,
        "lilo_backbone": backbone,
        "lilo_setting": setting,
        "lilo": lilo,
        "agrees": "not run" if agrees is None else "yes" if agrees else "no",
        "difference": diff,
        "p": p,
        "n": n,
        "reproduced": bool(agrees and test is not None and not test.within_noise),
    }


def _ranking(paper: pd.DataFrame, lilo: _Lilo) -> Iterator[dict[str, Any]]:
    """Per setting (backbone x length) of the paper's with several methods, and per score:
    the method(s) ranked first, against lilo's first at the same length (Overall: over the
    lengths lilo ran). `paper_holds`: the paper underlines exactly those. The test: lilo's
    first minus its runner-up when lilo agrees, the paper's first minus lilo's when not."""
    table2 = paper[paper["table"] == "table2"]
    several = table2.groupby("backbone")["method"].nunique()
    for backbone in [b for b in table2["backbone"].unique() if several[b] > 1]:
        for target in (4000, 8000, 16000, OVERALL):
            for metric in _SCORE:
                cell = table2[
                    (table2["backbone"] == backbone) & (table2["target_words"] == target)
                    & (table2["metric"] == metric)
                ]  # fmt: skip
                firsts = cell.loc[cell["value"] == cell["value"].max(), "method"].tolist()
                holds = set(firsts) == set(cell.loc[cell["marked_best"], "method"])
                claim = f"{backbone}, {_length(target)}: {' = '.join(firsts)}"
                values = cell.set_index("method")["value"].items()
                head = (
                    f"{claim} first on {_NAME[metric]}",
                    ", ".join(f"{m} {v:.2f}" for m, v in values),
                    holds,
                )
                for lb in lilo.backbones():
                    yield _rank_row(head, firsts, lilo, lb, target, metric, list(cell["method"]))


def _rank_row(
    head: tuple[str, str, bool],
    firsts: list[str],
    lilo: _Lilo,
    backbone: str,
    target: int,
    metric: str,
    methods: list[str],
) -> dict[str, Any]:
    setting = lilo.setting(backbone, target)
    ran = target == OVERALL or target in lilo.lengths(backbone)
    found = {m: lilo.mean(backbone, m, target, metric) for m in methods}
    means = {m: v for m, v in found.items() if v is not None}
    present = [m for m in firsts if m in means]
    if not ran or len(means) < 2 or not present:
        return _record(*head, backbone, setting, _means(means), None, None)
    order = sorted(means, key=lambda m: -means[m])
    tops = [m for m in order if means[m] == means[order[0]]]  # a tie ranks all first
    agrees = any(m in firsts for m in tops)
    if agrees:
        a = next(m for m in tops if m in firsts)
        b = next(m for m in order if m != a)
    else:
        a, b = max(present, key=lambda m: means[m]), order[0]
    test = lilo.paired(
        lilo.values(backbone, a, target, metric), lilo.values(backbone, b, target, metric)
    )
    return _record(*head, backbone, f"{setting}: {a} - {b}", _means(means), agrees, test)


def _means(means: dict[str, float]) -> str:
    return (
        ", ".join(f"{m} {fixed(v)}" for m, v in sorted(means.items(), key=lambda kv: -kv[1])) or "-"
    )


def _pairwise(claim: str, paper_text: str, holds: bool, lilo: _Lilo, higher: str, lower: str,
              metric: str) -> Iterator[dict[str, Any]]:  # fmt: skip
    """lilo's `higher` above `lower` on `metric` at each length it ran and Overall."""
    for lb in lilo.backbones():
        for target in [*lilo.lengths(lb), OVERALL]:
            hi, lo = lilo.values(lb, higher, target, metric), lilo.values(lb, lower, target, metric)
            setting = f"{lilo.setting(lb, target)}: {higher} - {lower}"
            if hi.empty or lo.empty:
                yield _record(claim, paper_text, holds, lb, setting, "-", None, None)
                continue
            test = lilo.paired(hi, lo)
            shown = f"{higher} {fixed(hi.mean())}, {lower} {fixed(lo.mean())}"
            agrees = None if test is None else test.difference.mean > 0
            yield _record(claim, paper_text, holds, lb, setting, shown, agrees, test)


def _observations(paper: pd.DataFrame, lilo: _Lilo) -> Iterator[dict[str, Any]]:
    t2 = paper[paper["table"] == "table2"]

    def value(backbone: str, method: str, target: int, metric: str) -> float:
        row = t2[
            (t2["backbone"] == backbone) & (t2["method"] == method)
            & (t2["target_words"] == target) & (t2["metric"] == metric)
        ]  # fmt: skip
        return float(row["value"].iloc[0])

    lengths = (4000, 8000, 16000)
    q32 = "Qwen2.5-32B-Instruct"
    pairs = {
        t: (value(q32, "ral_writer", t, "s_c"), value(q32, "agentwrite", t, "s_c")) for t in lengths
    }
    shown = "; ".join(f"{_length(t)}: {r:.2f} vs {a:.2f}" for t, (r, a) in pairs.items())
    claim = f"RAL-Writer's S_c above AgentWrite's at every length ({q32})"
    holds = all(r > a for r, a in pairs.values())
    yield from _pairwise(claim, shown, holds, lilo, "ral_writer", "agentwrite", "s_c")
    plan = [
        b
        for b in t2["backbone"].unique()
        if set(PLAN_WRITE) <= set(t2[t2["backbone"] == b]["method"])
    ]
    below = [
        value(b, "single", t, "s_l") < value(b, m, t, "s_l")
        for b in plan for m in PLAN_WRITE for t in (*lengths, OVERALL)
    ]  # fmt: skip
    for m in PLAN_WRITE:
        yield from _pairwise(
            "Single's S_l far below the Plan-Write methods'",
            f"below in {sum(below)} of {len(below)} cells ({', '.join(plan)})",
            all(below), lilo, m, "single", "s_l",
        )  # fmt: skip
    rows = t2[["backbone", "method"]].drop_duplicates().to_records(index=False)
    falling = [
        value(b, m, 16000, "s_l") < value(b, m, 8000, "s_l") < value(b, m, 4000, "s_l")
        for b, m in rows
    ]
    claim = "S_l falls as the length grows: 16k below 8k below 4k"
    others = [f"{b} {m}" for (b, m), f in zip(rows, falling, strict=True) if not f]
    text = f"strictly in {sum(falling)} of {len(falling)} backbone x method rows" + (
        f" (not {', '.join(others)})" if others else ""
    )
    for lb in lilo.backbones():
        ran = lilo.lengths(lb)
        if len(ran) < 2:
            yield _record(claim, text, all(falling), lb, "two lengths", "-", None, None)
            continue
        for method in sorted(set(lilo.data.loc[lilo.data["backbone"] == lb, "method"])):
            for short, long in zip(ran, ran[1:], strict=False):
                s = lilo.values(lb, method, short, "s_l")
                longer = lilo.values(lb, method, long, "s_l")
                setting = f"{method}: {_length(short)} - {_length(long)}"
                test = lilo.paired(s, longer)
                shown = (
                    f"{_length(short)} {fixed(s.mean())}, {_length(long)} {fixed(longer.mean())}"
                )
                agrees = None if test is None else test.difference.mean > 0
                yield _record(claim, text, all(falling), lb, setting, shown, agrees, test)


def claims(
    paper: pd.DataFrame,
    scores: pd.DataFrame,
    *,
    seed: int = 0,
    own: Mapping[str, str] | None = None,
) -> pd.DataFrame:
    """Every claim (COLUMNS): the paper's values and whether they bear it out (`paper_holds`),
    lilo's means, whether lilo's run agrees (`not run`: a length or method lilo has not run),
    the paired difference over samples with its 95% interval, p and n; `reproduced` when
    lilo agrees and the difference is not within noise. `scores`: headline score rows
    (sample_id, method, variant, target_words, backbone, score, value); `own`: the variant
    that stands for each paper method (`own_variants`)."""
    lilo = _Lilo(scores, seed, own)
    rows = [*_ranking(paper, lilo), *_observations(paper, lilo)]
    return pd.DataFrame(rows, columns=COLUMNS)
