"""Probe data lilo makes itself, so the probes run with no clone and at any size.

- Key-value sets as the authors' script makes them (k pairs of random UUID4 strings, one
  of them asked for), from a seeded generator: the same seed gives the same sets.
- Multi-document QA from what the warehouse holds: the question of an approved
  single-paper QA pair, the ~100-word passage of its paper holding its evidence as the
  gold document, and passages of papers outside its sample as distractors: those most
  similar to the question by lilo's embedder (`hard`, as Contriever's retrieved ones
  are) or a seeded random draw (`random`); none contains the answer.
- Multi-document QA from the imported NQ oracle file when the clone lacks the
  10/20/30-document files: the other questions' gold passages are the distractor pool.

Each construction is named in its probe set (e.g. `lilo/mdqa-20[warehouse,hard]`) and
recorded with every answer as its variant."""

from __future__ import annotations

import functools
import random
import uuid
from collections.abc import Callable, Sequence

import numpy as np

from lilo.tasks.probes.metric import normalize_answer
from lilo.tasks.probes.records import Document, ProbeItem
from lilo.tasks.records import PaperText, QAPair
from lilo.tasks.text import count_words, split_sentences

__all__ = [
    "PASSAGE_WORDS",
    "kv_items",
    "mdqa_from_oracle",
    "mdqa_from_warehouse",
    "passages",
    "variant_of",
]

# The authors' passages are Wikipedia chunks of about 100 words.
PASSAGE_WORDS = 100
Embed = Callable[[list[str]], np.ndarray]


def variant_of(probe_set: str) -> str:
    """The construction a probe set names: `published` for the authors' files, else
    `lilo[...]` (e.g. lilo[seed=0], lilo[warehouse,hard])."""
    if probe_set.startswith("liu/"):
        return "published"
    return "lilo" + probe_set[probe_set.find("[") :] if "[" in probe_set else "lilo"


def kv_items(size: int, examples: int, seed: int) -> list[ProbeItem]:
    """`examples` sets of `size` pairs, each key and value a UUID4 string, one pair chosen
    as the one asked for, all drawn from one generator seeded by (size, seed)."""
    if size < 2:
        raise ValueError(f"a key-value set needs at least 2 keys, not {size}")
    rng = random.Random(f"lilo-kv:{size}:{seed}")

    def uuid4() -> str:
        return str(uuid.UUID(int=rng.getrandbits(128), version=4))

    probe_set = f"lilo/kv-{size}[seed={seed}]"
    items = []
    for n in range(examples):
        records: dict[str, str] = {}
        while len(records) != size:
            records[uuid4()] = uuid4()
        pairs = tuple(records.items())
        key, value = pairs[rng.randrange(size)]
        items.append(
            ProbeItem(f"{probe_set}/{n}", probe_set, "kv", size, n, "lilo", key, (value,), pairs)
        )
    return items


def passages(paper: PaperText, words: int = PASSAGE_WORDS) -> list[Document]:
    """The paper's prose as passages of about `words` words, whole sentences, in order
    (sectioning and environment lines left out), each titled with the paper's title."""
    chunks: list[str] = []
    current: list[str] = []
    for line in paper.text.splitlines():
        if not line.strip() or line.lstrip().startswith("\\"):
            continue
        for sentence in split_sentences(line):
            current.append(sentence)
            if count_words(" ".join(current)) >= words:
                chunks.append(" ".join(current))
                current = []
    if current:
        chunks.append(" ".join(current))
    return [{"title": paper.title, "text": c} for c in chunks]


def _squash(text: str) -> str:
    return " ".join(text.split())


@functools.lru_cache(maxsize=65536)
def _normalized(text: str) -> str:
    return normalize_answer(text)


def _contains(document: Document, answers: Sequence[str]) -> bool:
    return any(normalize_answer(a) in _normalized(document["text"]) for a in answers)


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
    allowed = [i for i, d in enumerate(pool) if not any(g in _normalized(d["text"]) for g in gold)]
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
    samples: dict[str, Sequence[str]],
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
        if not _contains(gold, answers):
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
            probe_set = f"lilo/mdqa-{size}[warehouse,{how}]"
            items.append(
                ProbeItem(
                    f"{probe_set}/{pair.qa_id}",
                    probe_set,
                    "mdqa",
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
    quote = _squash(quote)
    for doc in docs:
        if quote and quote in _squash(doc["text"]):
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
    pool: list[Document] = list(
        {_squash(o.gold["text"]): o.gold for o in oracle if o.gold}.values()
    )
    vectors = embed([f"{d['title']} {d['text']}" for d in pool]) if how == "hard" else None
    rng = random.Random(f"lilo-mdqa-oracle:{how}:{seed}")
    items: list[ProbeItem] = []
    left_out: list[str] = []
    for item in oracle[:examples]:
        assert item.gold is not None
        own = _squash(item.gold["text"])
        keep = [i for i, d in enumerate(pool) if _squash(d["text"]) != own]
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
            probe_set = f"lilo/mdqa-{size}[nq-oracle,{how}]"
            items.append(
                ProbeItem(
                    f"{probe_set}/{item.line}",
                    probe_set,
                    "mdqa",
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
