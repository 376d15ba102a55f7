"""Compress (DESIGN §7): AgentWrite on the input compressed to `compress_ratio` of its tokens.

LLMLingua-2 (the optional extra `.[compress]`) needs the `llmlingua` package and its model
already in the local Hugging Face cache (nothing is downloaded). The built-in extractive
compressor keeps, per paper, the sentences closest to the paper's embedding centroid, in
their original order, plus every sectioning line so the structure survives. The compressor
used is part of `method_args` and of the variant the leaderboard shows
(`compress[llmlingua2]`, `compress[extractive]`), so one never stands in for the other
unseen; `generate.compressor = "llmlingua2"` fails the generation when it is not there.
"""

from __future__ import annotations

import functools
import importlib.util
import re
from typing import Any

import numpy as np

from tasks.config import Settings
from tasks.embeddings import Embedder
from tasks.methods.agentwrite import plan_and_write
from tasks.methods.base import Draft, Run, Writer, method
from tasks.text import split_sentences
from tasks.tokens import count_word_tokens

__all__ = ["compress", "compress_extractive"]

_HEADING_RE = re.compile(r"\s*\\(part|chapter|section|subsection|subsubsection|paragraph)\*?\{")


def compress_extractive(text: str, ratio: float, embedder: Embedder) -> str:
    """Keep the sentences most similar to the paper's centroid until `ratio` of its tokens."""
    paragraphs = [p for p in re.split(r"\n\s*\n", text) if p.strip()]
    units: list[tuple[int, str, bool]] = []  # (paragraph, text, is heading)
    for n, paragraph in enumerate(paragraphs):
        for line in paragraph.split("\n"):
            if _HEADING_RE.match(line):
                units.append((n, line.strip(), True))
        body = "\n".join(line for line in paragraph.split("\n") if not _HEADING_RE.match(line))
        units.extend((n, s, False) for s in split_sentences(body))
    budget = ratio * count_word_tokens(text)
    keep = {i for i, u in enumerate(units) if u[2]}
    used = sum(count_word_tokens(units[i][1]) for i in keep)
    sentences = [i for i, u in enumerate(units) if not u[2]]
    if sentences:
        vectors = embedder.embed([units[i][1] for i in sentences])
        centroid = vectors.mean(axis=0)
        similarity = vectors @ (centroid / (np.linalg.norm(centroid) or 1.0))
        for j in sorted(range(len(sentences)), key=lambda j: (-similarity[j], j)):
            tokens = count_word_tokens(units[sentences[j]][1])
            if used + tokens <= budget:
                keep.add(sentences[j])
                used += tokens
    kept: dict[int, list[str]] = {}
    for i in sorted(keep):
        kept.setdefault(units[i][0], []).append(units[i][1])
    return "\n\n".join(" ".join(parts) for _, parts in sorted(kept.items()))


@functools.cache
def _llmlingua_ready(model: str) -> bool:
    if importlib.util.find_spec("llmlingua") is None:
        return False
    from huggingface_hub import try_to_load_from_cache

    return isinstance(try_to_load_from_cache(model, "config.json"), str)


@functools.cache
def _llmlingua(model: str) -> Any:
    from llmlingua import PromptCompressor

    return PromptCompressor(model_name=model, use_llmlingua2=True, device_map="cpu")


def _args(settings: Settings) -> dict[str, Any]:
    model = settings.generate.llmlingua_model
    wanted = settings.generate.compressor
    lingua = wanted == "llmlingua2" or (wanted == "auto" and _llmlingua_ready(model))
    return {
        "ratio": settings.generate.compress_ratio,
        "compressor": "llmlingua2" if lingua else "extractive",
        "compressor_model": model if lingua else settings.embedding.model,
        "temperature": settings.llm.temperature,
        "max_tokens": settings.generate.step_max_tokens,
    }


def _variant(args: dict[str, Any]) -> str:
    return f"compress[{args['compressor']}]"


@method("compress", args=_args, variant=_variant)
def compress(
    ratio: float, compressor: str, compressor_model: str, temperature: float, max_tokens: int
) -> Writer:
    def shrink(text: str, embedder: Embedder) -> str:
        if compressor == "llmlingua2":
            if not _llmlingua_ready(compressor_model):
                raise RuntimeError(
                    f"compressor llmlingua2 asked for, but llmlingua or {compressor_model} is "
                    "not available: pip install -e '.[compress]' and put the model in the "
                    "Hugging Face cache, or set generate.compressor=extractive"
                )
            result = _llmlingua(compressor_model).compress_prompt(
                text, rate=ratio, force_tokens=["\n"]
            )
            return str(result["compressed_prompt"])
        return compress_extractive(text, ratio, embedder)

    def write(run: Run) -> Draft:
        texts = [shrink(p.text, run.embedder) for p in run.papers]
        return plan_and_write(run, texts, temperature, max_tokens)

    return write
