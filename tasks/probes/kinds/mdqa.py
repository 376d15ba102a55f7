"""Multi-document question answering (Liu et al., TACL 2024, §2): a question, k documents
of which one holds the answer, the gold document at a chosen position; and its two
baselines, the question alone (closed-book) and with its gold document alone (oracle).
Its data: the authors' published NaturalQuestions files, else lilo-built sets:

- from the imported NQ oracle file when the clone lacks the 10/20/30-document files: the
  other questions' gold passages are the distractor pool;
- from what the warehouse holds: the question of an approved single-paper QA pair, the
  ~100-word passage of its paper holding its evidence as the gold document, and passages
  of papers outside its sample as distractors.

Distractors are those most similar to the question by lilo's embedder (`hard`, as
Contriever's retrieved ones are) or a seeded random draw (`random`); none contains the
answer."""

from __future__ import annotations

import random
from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np

from lilo.tasks.config import ProbeSettings
from lilo.tasks.probe_records import Document, ProbeItem, ProbeUnit, nonempty_text
from lilo.tasks.probes.build import contains, normalized, passages, squash
from lilo.tasks.probes.kinds.base import (
    Embed,
    Flag,
    ProbeDataError,
    ProbeInputs,
    ProbeTask,
    probe_task,
)
from lilo.tasks.probes.metric import normalize_answer, qa_correct
from lilo.tasks.probes.placement import place_gold
from lilo.tasks.probes.prompts import ProbePrompts
from lilo.tasks.records import PaperText, QAPair

__all__ = ["MDQA", "clone_item", "mdqa_from_oracle", "mdqa_from_warehouse", "oracle_item"]

NAME = "mdqa"


def _distractors(
    question: str,
    answers: Sequence[str],
    pool: Sequence[Document],
    count: int,
    how: str,
    embed: Embed,
    pool_vectors: np.ndarray | None,
    rng: random.Random,
) -> list[Document] | None:
    """`count` passages of the pool without the answer: the most similar to the question
    first (`hard`), or a random draw (`random`); None when the pool is too small."""
    gold = [normalize_answer(a) for a in answers]
    allowed = [i for i, d in enumerate(pool) if not any(g in normalized(d["text"]) for g in gold)]
    if len(allowed) < count:
        return None
    if how == "random":
        return [pool[i] for i in rng.sample(allowed, count)]
    assert pool_vectors is not None
    scores = pool_vectors[allowed] @ embed([question])[0]
    order = np.argsort(-scores, kind="stable")[:count]
    return [pool[allowed[i]] for i in order]


def mdqa_from_warehouse(
    pairs: Sequence[QAPair],
    papers: dict[str, PaperText],
    samples: Mapping[str, Sequence[str]],
    sizes: Sequence[int],
    examples: int,
    how: str,
    seed: int,
    embed: Embed,
) -> tuple[list[ProbeItem], list[str]]:
    """Items for each size from approved single-paper QA pairs (in id order, the first
    `examples` that qualify); and one line per pair left out, saying why. `samples` maps
    a sample id to its paper ids (distractors come from papers outside the sample)."""
    passages_of = {pid: passages(p) for pid, p in sorted(papers.items())}
    pool = [(pid, d) for pid, docs in passages_of.items() for d in docs]
    vectors = embed([f"{d['title']} {d['text']}" for _, d in pool]) if how == "hard" else None
    rng = random.Random(f"lilo-mdqa:{how}:{seed}")
    items: list[ProbeItem] = []
    left_out: list[str] = []
    chosen = 0
    for pair in sorted(pairs, key=lambda p: p.qa_id):
        if chosen >= examples:
            break
        if pair.kind != "single" or pair.status != "approved" or not pair.evidence:
            continue
        gold = _gold_passage(passages_of.get(pair.paper_ids[0], []), pair.evidence[0]["quote"])
        if gold is None:
            left_out.append(f"{pair.qa_id}: its evidence is not within one passage of its paper")
            continue
        answers = (pair.answer,)
        if not contains(gold, answers):
            left_out.append(f"{pair.qa_id}: its answer is not a span of its evidence passage")
            continue
        inside = set(samples.get(pair.sample_id, pair.paper_ids))
        outside = [i for i, (pid, _) in enumerate(pool) if pid not in inside]
        candidates = [pool[i][1] for i in outside]
        sub = vectors[outside] if vectors is not None else None
        found = _distractors(
            pair.question, answers, candidates, max(sizes) - 1, how, embed, sub, rng
        )
        if found is None:
            left_out.append(f"{pair.qa_id}: fewer than {max(sizes) - 1} distractor passages")
            continue
        for size in sizes:
            probe_set = f"lilo/{NAME}-{size}[warehouse,{how}]"
            items.append(
                ProbeItem(
                    f"{probe_set}/{pair.qa_id}",
                    probe_set,
                    NAME,
                    size,
                    chosen,
                    "lilo",
                    pair.question,
                    answers,
                    tuple(found[: size - 1]),
                    gold,
                )
            )
        chosen += 1
    return items, left_out


def _gold_passage(docs: Sequence[Document], quote: str) -> Document | None:
    quote = squash(quote)
    for doc in docs:
        if quote and quote in squash(doc["text"]):
            return doc
    return None


def mdqa_from_oracle(
    oracle: Sequence[ProbeItem],
    sizes: Sequence[int],
    examples: int,
    how: str,
    seed: int,
    embed: Embed,
) -> tuple[list[ProbeItem], list[str]]:
    """Items for each size from the first `examples` NQ oracle questions, the other
    questions' gold passages (each once) as the distractor pool."""
    pool: list[Document] = list({squash(o.gold["text"]): o.gold for o in oracle if o.gold}.values())
    vectors = embed([f"{d['title']} {d['text']}" for d in pool]) if how == "hard" else None
    rng = random.Random(f"lilo-mdqa-oracle:{how}:{seed}")
    items: list[ProbeItem] = []
    left_out: list[str] = []
    for item in oracle[:examples]:
        assert item.gold is not None
        own = squash(item.gold["text"])
        keep = [i for i, d in enumerate(pool) if squash(d["text"]) != own]
        sub = vectors[keep] if vectors is not None else None
        found = _distractors(
            item.question,
            item.answers,
            [pool[i] for i in keep],
            max(sizes) - 1,
            how,
            embed,
            sub,
            rng,
        )
        if found is None:
            left_out.append(f"{item.item_id}: fewer than {max(sizes) - 1} distractor passages")
            continue
        for size in sizes:
            probe_set = f"lilo/{NAME}-{size}[nq-oracle,{how}]"
            items.append(
                ProbeItem(
                    f"{probe_set}/{item.line}",
                    probe_set,
                    NAME,
                    size,
                    item.line,
                    item.source,
                    item.question,
                    item.answers,
                    tuple(found[: size - 1]),
                    item.gold,
                )
            )
    return items, left_out


def _document(ctx: dict[str, Any]) -> Document:
    return {"title": str(ctx.get("title") or ""), "text": nonempty_text(ctx["text"], "a passage")}


def _answers(row: dict[str, Any]) -> tuple[str, ...]:
    answers = tuple(a for a in row["answers"] if isinstance(a, str) and a.strip())
    if not answers:
        raise ValueError("no gold answer")
    return answers


def oracle_item(row: dict[str, Any], n: int, relative: str) -> ProbeItem:
    question, answers = nonempty_text(row["question"], "question"), _answers(row)
    golds = [c for c in row["ctxs"] if c.get("isgold")]
    if len(golds) != 1:
        raise ValueError(f"{len(golds)} gold passages, not 1")
    return ProbeItem(
        f"liu/nq-oracle/{n}",
        "liu/nq-oracle",
        NAME,
        1,
        n,
        relative,
        question,
        answers,
        (),
        _document(golds[0]),
    )


def clone_item(row: dict[str, Any], n: int, relative: str, docs: int) -> ProbeItem:
    question, answers = nonempty_text(row["question"], "question"), _answers(row)
    ctxs = row["ctxs"]
    if len(ctxs) != docs:
        raise ValueError(f"{len(ctxs)} documents where the folder says {docs}")
    golds = [i for i, c in enumerate(ctxs) if c.get("isgold")]
    if len(golds) != 1:
        raise ValueError(f"{len(golds)} gold passages, not 1")
    distractors = tuple(_document(c) for i, c in enumerate(ctxs) if i != golds[0])
    return ProbeItem(
        f"liu/{NAME}-{docs}/{n}",
        f"liu/{NAME}-{docs}",
        NAME,
        docs,
        n,
        relative,
        question,
        answers,
        distractors,
        _document(ctxs[golds[0]]),
    )


def _make(
    wanted: Sequence[int], cfg: ProbeSettings, inputs: ProbeInputs, embed: Embed
) -> tuple[list[ProbeItem], list[str]]:
    how, n, seed = cfg.distractors, cfg.examples, cfg.seed
    if cfg.source in ("auto", "nq-oracle") and inputs.oracle:
        return mdqa_from_oracle(inputs.oracle, wanted, n, how, seed, embed)
    if cfg.source == "nq-oracle":
        raise ProbeDataError(
            "no NQ oracle file imported: `lilo import lost-in-the-middle CLONE` with a clone "
            "holding qa_data/nq-open-oracle.jsonl.gz, or use --source warehouse"
        )
    made, left_out = mdqa_from_warehouse(
        inputs.pairs, inputs.papers, inputs.samples, wanted, n, how, seed, embed
    )
    if not made:
        raise ProbeDataError(
            "no multi-document QA data: the warehouse has no approved single-paper QA "
            "pair whose answer lies in its evidence passage; run the pipeline "
            "(`lilo demo`, `lilo run`) or import the authors' clone"
        )
    return made, left_out


def _prompt(unit: ProbeUnit, prompts: ProbePrompts) -> str:
    item = unit.item
    if unit.setting == "closed_book":
        return prompts.closed_book(item.question)
    assert item.gold is not None
    if unit.setting == "oracle":
        return prompts.qa(item.question, [item.gold], unit.query_aware)
    documents = place_gold(list(item.context), item.gold, unit.position or 0)
    return prompts.qa(item.question, documents, unit.query_aware)


MDQA = probe_task(
    ProbeTask(
        NAME,
        title="multi-document QA",
        unit="documents",
        sizes=Flag("mdqa_docs", "--docs", "documents per question, e.g. 10,20,30"),
        sources=("auto", "published", "nq-oracle", "warehouse"),
        source_help="else the NQ oracle passages, else the warehouse's QA pairs",
        make=_make,
        prompt=_prompt,
        grade=lambda prediction, item: qa_correct(prediction, item.answers),
        stop=("\n",),  # the answer's line
        baselines=("closed_book", "oracle"),
        flags=(
            Flag("closed_book", "--closed-book", "also ask each question alone (default: on)"),
            Flag(
                "oracle",
                "--oracle",
                "also ask each question with its gold document alone (default: on)",
            ),
            Flag(
                "distractors",
                "--distractors",
                "lilo-built data: the passages most similar to the question, or random",
            ),
        ),
        paper_positions={10: (0, 4, 9), 20: (0, 4, 9, 14, 19), 30: (0, 4, 9, 14, 19, 24, 29)},
    ),
    __name__,
)
