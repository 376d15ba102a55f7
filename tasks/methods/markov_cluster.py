"""Markov-cluster (docs/design.md §15; Markov-enhanced clustering, arXiv 2506.18036), lite
variant on
the three papers: chunk, embed, cluster with K-Means++ (k by silhouette), summarise each
cluster from the chunks nearest its centroid, then write one section per cluster in the
order of the most probable path through the clusters' transition matrix, each section
with a share of the length proportional to its cluster's size."""

from __future__ import annotations

import re
from typing import Any

import numpy as np
from pydantic import Field

from lilo.tasks.config import OfflineSettings, output_values
from lilo.tasks.llm.offline.base import offline_reply
from lilo.tasks.llm.offline.extract import candidates, keywords, query_terms, select
from lilo.tasks.llm.types import Message
from lilo.tasks.methods._markov import (
    best_path,
    cluster,
    first_appearance,
    kendall_tau,
    transition_matrix,
)
from lilo.tasks.methods._section_writer import (
    ChunkedSection,
    brief,
    budgets,
    evidence,
    prompt,
    word_chunks,
    write_section,
)
from lilo.tasks.methods.base import Draft, MethodSettings, Run, Writer, method
from lilo.tasks.paper_tags import parse_paper_blocks

__all__ = ["MarkovSettings", "markov_cluster"]


class MarkovSettings(ChunkedSection):
    """Markov-cluster (docs/design.md §15): the authors' chunking (500 words, 20 overlap), k by
    silhouette over 5..10, the paper's top_k of 5 chunks per cluster summary."""

    k_min: int = Field(5, ge=2)
    k_max: int = Field(10, ge=2)
    top_k: int = Field(5, gt=0)
    summary_words: int = Field(150, gt=0)
    # Exact DP is O(n^2 2^n); past this many clusters the path is the order of first
    # appearance (recorded with the generation).
    max_path_clusters: int = Field(16, gt=0)
    # One reply cannot hold a 4k-16k-word text: a longer section is written in parts.
    section_max_words: int = Field(1000, gt=0)
    seed: int = 0


def _args(s: MethodSettings[MarkovSettings]) -> dict[str, Any]:
    return {
        **output_values(s.own),
        "embedding": s.embedder,
        "temperature": s.llm.temperature,
        "max_tokens": s.generate.step_max_tokens,
    }


@method("markov_cluster", args=_args, settings=MarkovSettings, section="markov")
def markov_cluster(
    *,
    chunk_words: int,
    overlap_words: int,
    k_min: int,
    k_max: int,
    top_k: int,
    summary_words: int,
    max_path_clusters: int,
    section_max_words: int,
    seed: int,
    embedding: str,
    temperature: float,
    max_tokens: int,
) -> Writer:
    def write(run: Run) -> Draft:
        def chat(text: str, label: str) -> str:
            return run.chat(text, label, temperature=temperature, max_tokens=max_tokens)

        chunks = word_chunks([p.text for p in run.papers], chunk_words, overlap_words)
        vectors = run.embedder.embed([c.text for c in chunks])
        labels, k = cluster(vectors, k_min, k_max, seed)
        members = [[i for i, label in enumerate(labels) if label == j] for j in range(k)]
        task = brief(run)
        summaries = []
        for j, idx in enumerate(members):
            centroid = vectors[idx].mean(axis=0)
            distance = np.linalg.norm(vectors[idx] - centroid, axis=1)
            near = [idx[i] for i in np.lexsort((idx, distance))[:top_k]]
            text = prompt(
                "markov_summary",
                brief=task,
                words=summary_words,
                evidence=evidence([chunks[i] for i in near]),
            )
            summaries.append(_summary(chat(text, f"cluster{j}")))
        order = first_appearance(labels.tolist())
        matrix = transition_matrix(labels.tolist(), k)
        path, exact = best_path(matrix, max_path_clusters, order)
        source = sorted(range(k), key=lambda j: (float(np.mean(members[j])), j))
        plan = [f"{n}. {summaries[j][0]}" for n, j in enumerate(path, 1)]
        words = budgets(run.target_words, [len(members[j]) for j in path])
        sections = [
            write_section(
                chat,
                f"section{j}",
                w,
                section_max_words,
                brief=task,
                context="\n".join(plan),
                evidence=evidence([chunks[i] for i in members[j]]),
                heading=summaries[j][0],
                level=2,
                guide=summaries[j][1],
            )
            for j, w in zip(path, words, strict=True)
        ]
        structure = {
            "chunks": len(chunks),
            "k": k,
            "labels": labels.tolist(),
            "sizes": [len(m) for m in members],
            "summaries": [f"## {h}\n{s}" for h, s in summaries],
            "transitions": [[round(p, 6) for p in row] for row in matrix],
            "path": path,
            "path_exact": exact,
            "source_order": source,
            "kendall_tau": round(kendall_tau(path, source), 6),
            "section_words": words,
            "embedder": run.embedder.label,
        }
        return Draft("\n\n".join(s for s in sections if s), plan=tuple(plan), structure=structure)

    return write


def _summary(reply: str) -> tuple[str, str]:
    """(heading, summary) from a reply whose first line is the heading; a reply without one
    is headed by its first words."""
    lines = [line.strip() for line in reply.strip().splitlines() if line.strip()]
    if not lines:
        return "Part of the papers", ""
    if lines[0].startswith("#"):
        return lines[0].lstrip("#").strip() or "Part of the papers", " ".join(lines[1:])
    return " ".join(lines[0].split()[:8]), " ".join(lines)


# The offline engine's reply to the cluster summary (docs/design.md §9, §15): a heading from
# the passages' most frequent content words, then the passages' sentences that best carry
# them, within the word limit the prompt states.

SUMMARY_SIGNATURE = "Summarise the common thread of the passages below"
_WORDS_RE = re.compile(r"in at most (\d+) words")


def _asks_summary(prompt: str) -> bool:
    return SUMMARY_SIGNATURE in prompt


@offline_reply("cluster_summary", matches=_asks_summary)
def offline_summary(messages: list[Message], offline: OfflineSettings) -> str:
    prompt = "\n".join(m["content"] for m in messages)
    match = _WORDS_RE.search(prompt)
    budget = int(match.group(1)) if match else 150
    pool = [c for c in candidates(prompt, offline) if c.weight > 0]
    top = keywords((c.text for c in pool), 4)
    if not top:
        top = keywords((t for _, t in parse_paper_blocks(prompt)), 4) or ["the papers"]
    chosen = select(pool, query_terms(" ".join(top)), budget, budget)
    heading = ", ".join(w.capitalize() for w in top[:3])
    return f"## {heading}\n" + " ".join(c.text for c in chosen)
