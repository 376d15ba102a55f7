"""LongScope-style (docs/design.md §15; test-time scaling of a skeleton, LLMxMapReduce-V2 defaults),
lite variant on the three papers. The papers' chunks are grouped by k-means; each group
proposes a local skeleton and the skeletons are merged; per-paper digests follow the
skeleton; each group proposes edits, which convolution layers refine (each edit scored by
a judge call, sets of `kernel_width` edits sampled in proportion to score and merged into
new edits, the top_k kept); best-of-N rewrites of the skeleton with the best edits follow
for a number of rounds; the final skeleton's digests feed a bottom-up writing: leaves from
the digests, parents from their children, within word budgets."""

from __future__ import annotations

import functools
import re
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Literal

from pydantic import Field

from lilo.tasks.config import output_values
from lilo.tasks.methods._convolve import sample_sets, top_k
from lilo.tasks.methods._section_writer import (
    Chunk,
    ChunkedSection,
    brief,
    budgets,
    evidence,
    prompt,
    word_chunks,
)
from lilo.tasks.methods._section_writer import write_section as _write_section
from lilo.tasks.methods._skeleton import (
    Node,
    Op,
    apply_edit,
    heading_key,
    leaves,
    parse_edit,
    parse_skeleton,
    render,
)
from lilo.tasks.methods.base import Draft, MethodSettings, Run, Writer, method

__all__ = ["LongScopeSettings", "QUICK", "edit_text", "judge_score", "longscope"]

# The cheaper preset (`generate.longscope.preset = "quick"`) for quick runs.
QUICK = {"layers": 1, "sets": 2, "best_of": 1, "rounds": 1}
_SCORE_RE = re.compile(r'"?(structure|descriptions)"?\s*[:=]\s*(\d+(?:\.\d+)?)', re.I)


class LongScopeSettings(ChunkedSection):
    """LongScope-style (docs/design.md §15) with LLMxMapReduce-V2's defaults: 6 convolution layers,
    kernel width 3, 10 sampled sets, top_k 6, best-of-3 for 3 rounds. `preset = "quick"`
    runs 1 layer of 2 sets, best-of-1 for 1 round (the values used are recorded)."""

    preset: Literal["paper", "quick"] = "paper"
    groups: int = Field(3, gt=0)
    layers: int = Field(6, ge=0)
    kernel_width: int = Field(3, gt=0)
    sets: int = Field(10, gt=0)
    top_k: int = Field(6, gt=0)
    best_of: int = Field(3, gt=0)
    rounds: int = Field(3, ge=0)
    # Parents (sections with subsections) share this part of the length; leaves the rest.
    parent_share: float = Field(0.1, ge=0.0, lt=1.0)
    digest_words: int = Field(1200, gt=0)
    section_max_words: int = Field(1000, gt=0)
    seed: int = 0


def _args(s: MethodSettings[LongScopeSettings]) -> dict[str, Any]:
    cfg = output_values(s.own)
    return {
        **cfg,
        **(QUICK if cfg["preset"] == "quick" else {}),
        "embedding": s.embedder,
        "temperature": s.llm.temperature,
        "max_tokens": s.generate.step_max_tokens,
    }


def _variant(args: dict[str, Any]) -> str:
    return "longscope" if args["preset"] == "paper" else f"longscope[{args['preset']}]"


def judge_score(reply: str) -> float:
    """structure + descriptions (0-20) from the judge's reply; a missing scale counts 0 and
    each is bounded to 0..10."""
    found = {k.lower(): float(v) for k, v in _SCORE_RE.findall(reply)}
    return sum(min(max(found.get(k, 0.0), 0.0), 10.0) for k in ("structure", "descriptions"))


def edit_text(ops: list[Op]) -> str:
    return "\n".join(
        f"{op.kind}: {op.heading}" + (f" | {op.guide}" if op.guide else "") for op in ops
    )


class _Session:
    """One run's calls, with the judge's scores kept per distinct skeleton, and the
    parameters of its writing."""

    def __init__(
        self,
        run: Run,
        temperature: float,
        max_tokens: int,
        digest_words: int,
        parent_share: float,
        section_max_words: int,
    ) -> None:
        self.run, self.brief = run, brief(run)
        self.temperature, self.max_tokens = temperature, max_tokens
        self.digest_words, self.parent_share = digest_words, parent_share
        self.section_max_words = section_max_words
        self.scores: dict[str, float] = {}

    def chat(self, text: str, label: str, attempt: int = 0) -> str:
        return self.run.chat(
            text, label, temperature=self.temperature, max_tokens=self.max_tokens, attempt=attempt
        )

    def score(self, nodes: list[Node]) -> float:
        text = render(nodes)
        if text not in self.scores:
            reply = self.chat(
                prompt("longscope_score", brief=self.brief, skeleton=text),
                f"score{len(self.scores)}",
            )
            self.scores[text] = judge_score(reply)
        return self.scores[text]

    def digests(self, nodes: list[Node], label: str) -> list[str]:
        return [
            self.chat(
                prompt(
                    "longscope_digest",
                    skeleton=render(nodes),
                    paper=f'<paper id="{i}">\n{p.text}\n</paper>',
                    words=self.digest_words,
                ),
                f"{label}{i}",
            )
            for i, p in enumerate(self.run.papers, 1)
        ]


def convolve(
    edits: list[list[Op]],
    score: Callable[[list[Op]], float],
    merge: Callable[..., list[Op]],
    layers: int,
    kernel_width: int,
    sets: int,
    k: int,
    seed: int,
) -> tuple[list[list[Op]], list[float], list[dict[str, Any]]]:
    """The convolution layers: each layer samples `sets` sets of edits by score, merges each
    into a new edit, and keeps the top k of old and new; returns the edits, their scores
    (best first) and a record per layer."""
    scores = [score(e) for e in edits]
    record = []
    for layer in range(layers):
        drawn = sample_sets(scores, kernel_width, sets, seed + layer)
        new = [merge([edits[i] for i in s], f"merge{layer}.{n}") for n, s in enumerate(drawn)]
        edits, scores = edits + new, scores + [score(e) for e in new]
        keep = top_k(scores, k)
        record.append({"layer": layer, "sets": drawn, "scores": scores, "kept": keep})
        edits, scores = [edits[i] for i in keep], [scores[i] for i in keep]
    order = top_k(scores, len(scores))
    return [edits[i] for i in order], [scores[i] for i in order], record


@method("longscope", args=_args, settings=LongScopeSettings, variant=_variant)
def longscope(
    *,
    preset: str,
    groups: int,
    chunk_words: int,
    overlap_words: int,
    layers: int,
    kernel_width: int,
    sets: int,
    top_k: int,
    best_of: int,
    rounds: int,
    parent_share: float,
    digest_words: int,
    section_max_words: int,
    seed: int,
    embedding: str,
    temperature: float,
    max_tokens: int,
) -> Writer:
    p = _Params(groups, chunk_words, overlap_words, layers, kernel_width, sets, top_k,
                best_of, rounds, parent_share, digest_words, section_max_words, seed,
                temperature, max_tokens)  # fmt: skip
    return functools.partial(_write, p)


@dataclass(frozen=True)
class _Params:
    """The factory's arguments, which the steps read."""

    groups: int
    chunk_words: int
    overlap_words: int
    layers: int
    kernel_width: int
    sets: int
    top_k: int
    best_of: int
    rounds: int
    parent_share: float
    digest_words: int
    section_max_words: int
    seed: int
    temperature: float
    max_tokens: int


def _write(p: _Params, run: Run) -> Draft:
    """The steps in order: a skeleton per group of chunks, merged; edits proposed per group
    and convolved; the skeleton refined with the best; the digests; the sections."""
    s = _Session(run, p.temperature, p.max_tokens, p.digest_words, p.parent_share,
                 p.section_max_words)  # fmt: skip
    chunks = word_chunks([paper.text for paper in run.papers], p.chunk_words, p.overlap_words)
    chunk_groups = _groups(run, chunks, p.groups, p.seed)
    local = [
        render(
            parse_skeleton(
                s.chat(prompt("longscope_local", brief=s.brief, evidence=evidence(g)), f"local{n}")
            )
        )
        for n, g in enumerate(chunk_groups)
    ]
    merged = s.chat(prompt("longscope_merge", brief=s.brief, skeletons="\n\n".join(local)), "merge")
    skeleton = parse_skeleton(merged) or parse_skeleton(local[0])
    edits, edit_scores, layer_records = convolve(
        _proposed_edits(s, skeleton, chunk_groups),
        lambda e: s.score(apply_edit(skeleton, e)),
        functools.partial(_combined, s, skeleton),
        p.layers,
        p.kernel_width,
        p.sets,
        p.top_k,
        p.seed,
    )
    skeleton, best, round_records = _refine(s, skeleton, edits, p.rounds, p.best_of)
    digests = s.digests(skeleton, "final_digest")
    text, words = _write_sections(s, skeleton, digests)
    structure = {
        "groups": [[c.index for c in g] for g in chunk_groups],
        "local_skeletons": local,
        "merged_skeleton": render(parse_skeleton(merged)),
        "digests": digests,
        "edits": [edit_text(e) for e in edits],
        "edit_scores": edit_scores,
        "layers": layer_records,
        "rounds": round_records,
        "skeleton": render(skeleton),
        "skeleton_score": best,
        "section_words": words,
        "embedder": run.embedder.label,
    }
    return Draft(text, plan=tuple(render(skeleton).splitlines()), structure=structure)


def _proposed_edits(
    s: _Session, skeleton: list[Node], chunk_groups: list[list[Chunk]]
) -> list[list[Op]]:
    """An edit per group, from the digests of the papers its chunks come from."""
    first = s.digests(skeleton, "digest")
    edits = []
    for n, g in enumerate(chunk_groups):
        shown = paper_blocks_of(first, {c.paper for c in g})
        ask = prompt("longscope_edit", skeleton=render(skeleton), evidence=shown)
        edits.append(parse_edit(s.chat(ask, f"edit{n}")))
    return edits


def _combined(s: _Session, skeleton: list[Node], chosen: list[list[Op]], label: str) -> list[Op]:
    """One edit merged from the `chosen` ones."""
    shown = "\n\n".join(edit_text(e) for e in chosen)
    return parse_edit(
        s.chat(prompt("longscope_combine", skeleton=render(skeleton), edits=shown), label)
    )


def _refine(
    s: _Session, skeleton: list[Node], edits: list[list[Op]], rounds: int, best_of: int
) -> tuple[list[Node], float, list[dict[str, Any]]]:
    """Best-of-N rewrites of the skeleton with the best edits, for a number of rounds: a
    rewrite is kept when the judge scores it above the skeleton; returns the skeleton, its
    score and a record per round."""
    records = []
    best = s.score(skeleton)
    for r in range(rounds):
        shown = "\n\n".join(edit_text(e) for e in edits)
        ask = prompt("longscope_refine", skeleton=render(skeleton), edits=shown)
        tries = [parse_skeleton(s.chat(ask, f"refine{r}.{i}", attempt=i)) for i in range(best_of)]
        tried = [s.score(t) if t else -1.0 for t in tries]
        pick = top_k(tried, 1)[0]
        records.append({"round": r, "scores": tried, "kept": tried[pick] > best})
        if tried[pick] > best:
            skeleton, best = tries[pick], tried[pick]
    return skeleton, best, records


def paper_blocks_of(texts: list[str], papers: set[int]) -> str:
    """`texts[i - 1]` in paper i's numbered tag, for each paper in `papers`."""
    return "\n\n".join(f'<paper id="{i}">\n{texts[i - 1]}\n</paper>' for i in sorted(papers))


def _groups(run: Run, chunks: list[Chunk], k: int, seed: int) -> list[list[Chunk]]:
    """The chunks grouped by k-means on their embeddings, groups in order of appearance."""
    from sklearn.cluster import KMeans  # 2 s to import: only when a method clusters

    n = min(k, len(chunks))
    if n < 2:
        return [chunks]
    labels = KMeans(n, init="k-means++", n_init=10, random_state=seed).fit_predict(
        run.embedder.embed([c.text for c in chunks])
    )
    order = list(dict.fromkeys(labels.tolist()))
    return [[c for c, lab in zip(chunks, labels, strict=True) if lab == g] for g in order]


def _write_sections(
    s: _Session, nodes: list[Node], digests: list[str]
) -> tuple[str, dict[str, int]]:
    """Bottom-up: leaves from the digests' matching parts, then each parent from its
    children's text; assembled in reading order."""
    leaf = set(leaves(nodes))
    parents = [i for i in range(len(nodes)) if nodes[i].level > 1 and i not in leaf]
    target = s.run.target_words
    share = s.parent_share if parents else 0.0
    words = dict(
        zip(sorted(leaf), budgets(round(target * (1 - share)), [1.0] * len(leaf)), strict=True)
    )
    words |= dict(
        zip(parents, budgets(target - sum(words.values()), [1.0] * len(parents)), strict=True)
    )
    parts = [_sections(d) for d in digests]
    plan = render(nodes)
    texts: dict[int, str] = {}
    for i in sorted(leaf | set(parents), reverse=True):
        node = nodes[i]
        common = {
            "brief": s.brief,
            "context": plan,
            "heading": node.heading,
            "level": node.level,
            "guide": node.guide,
        }
        if i in leaf:
            shown = "\n\n".join(
                f'<paper id="{p}">\n{part.get(heading_key(node.heading), "")}\n</paper>'
                for p, part in enumerate(parts, 1)
            )
            texts[i] = _write_section(
                s.chat, f"leaf{i}", words[i], s.section_max_words, evidence=shown, **common
            )
        else:
            kids = "\n\n".join(texts[j] for j in _children(nodes, i))
            texts[i] = _write_section(
                s.chat, f"parent{i}", words[i], s.section_max_words, children=kids, **common
            )
    title = [f"# {n.heading}" for n in nodes[:1] if n.level == 1]
    body = [texts[i] for i in range(len(nodes)) if i in texts]
    return "\n\n".join([*title, *body]), {nodes[i].heading: w for i, w in words.items()}


def _children(nodes: list[Node], i: int) -> list[int]:
    out, j = [], i + 1
    while j < len(nodes) and nodes[j].level > nodes[i].level:
        out.append(j)
        j += 1
    return out


def _sections(digest: str) -> dict[str, str]:
    """A digest's text under each heading, by the heading's normalised words."""
    out: dict[str, str] = {}
    key = ""
    for line in digest.splitlines():
        if line.lstrip().startswith("#"):
            key = heading_key(line.lstrip("#"))
        elif line.strip():
            out[key] = (out.get(key, "") + "\n" + line).strip()
    return out
