"""Compress (docs/design.md §7): AgentWrite on the input compressed to `compress_ratio` of its
tokens.

The paper names LLMLingua (Jiang et al., 2023) at rate 0.5: `compress[llmlingua]`, with the
causal LM `generate.llmlingua_lm`. `compress[llmlingua2]` is its successor LLMLingua-2
(`generate.llmlingua_model`). Both need the `llmlingua` package (the optional extra
`.[compress]`) and their model already in the local Hugging Face cache (nothing is
downloaded). The built-in extractive compressor, `compress[extractive]`, keeps per paper
the sentences closest to the paper's embedding centroid, in their original order, plus every
sectioning line so the structure survives. The compressor used is part of `method_args` and
of the variant the leaderboard shows, so one never stands in for another unseen: one asked
for and missing fails the generation with a record naming what to install.
`compress[sees-written]` is Compress with the writer seeing the text written so far
(tasks/methods/agentwrite.py).
"""

from __future__ import annotations

import functools
import importlib.util
import re
from typing import Any

import numpy as np

from lilo.tasks.embeddings import Embedder
from lilo.tasks.errors import InputError
from lilo.tasks.extras import MissingExtra
from lilo.tasks.methods.agentwrite import (
    PLAN_WRITE,
    SEES_WRITTEN,
    plan_and_write,
    plan_write_args,
)
from lilo.tasks.methods.base import Draft, MethodSettings, Run, Writer, method
from lilo.tasks.text import split_sentences
from lilo.tasks.tokens import count_word_tokens

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


LINGUA = ("llmlingua", "llmlingua2")


def _model(s: MethodSettings[None], compressor: str) -> str:
    return {
        "llmlingua": s.generate.llmlingua_lm,
        "llmlingua2": s.generate.llmlingua_model,
    }.get(compressor, s.embedding.model)


def _missing(model: str) -> InputError | None:
    """What is missing to run LLMLingua with `model` (None when ready): the extra or the model."""
    if importlib.util.find_spec("llmlingua") is None:
        return MissingExtra("the llmlingua package is not installed (pip install -e '.[compress]')")
    from huggingface_hub import try_to_load_from_cache

    if not isinstance(try_to_load_from_cache(model, "config.json"), str):
        return InputError(
            f"{model} is not in the local Hugging Face cache (huggingface-cli download {model})"
        )
    return None


@functools.cache
def _llmlingua(compressor: str, model: str) -> Any:
    from llmlingua import PromptCompressor

    return PromptCompressor(
        model_name=model, use_llmlingua2=compressor == "llmlingua2", device_map="cpu"
    )


def _args(s: MethodSettings[None]) -> dict[str, Any]:
    wanted = s.generate.compressor
    if wanted == "auto":
        ready = _missing(s.generate.llmlingua_model) is None
        wanted = "llmlingua2" if ready else "extractive"
    return {
        "ratio": s.generate.compress_ratio,
        "compressor": wanted,
        "compressor_model": _model(s, wanted),
        **plan_write_args(s),
    }


def _variant(args: dict[str, Any]) -> str:
    extra = ",sees-written" if args["sees_written"] else ""
    return f"compress[{args['compressor']}{extra}]"


def _compressor(name: str) -> Any:
    return lambda s: {"compressor": name, "compressor_model": _model(s, name)}


OPTIONS = {
    **{name: _compressor(name) for name in (*LINGUA, "extractive")},
    **SEES_WRITTEN,
}


@method("compress", args=_args, variant=_variant, options=OPTIONS, templates=PLAN_WRITE)
def compress(
    ratio: float,
    compressor: str,
    compressor_model: str,
    temperature: float,
    max_tokens: int,
    plan_max_tokens: int,
    sees_written: bool,
    shared_plan: bool,
    plan_steps_cap: int = 0,
) -> Writer:
    budgets = (max_tokens, plan_max_tokens)

    def shrink(text: str, embedder: Embedder) -> str:
        if compressor in LINGUA:
            if (why := _missing(compressor_model)) is not None:
                raise type(why)(
                    f"compress[{compressor}] cannot run: {why}; or name compress[extractive]"
                )
            # LLMLingua-2 keeps line breaks only when told to; LLMLingua keeps lines as units.
            keep = {"force_tokens": ["\n"]} if compressor == "llmlingua2" else {}
            result = _llmlingua(compressor, compressor_model).compress_prompt(
                text, rate=ratio, **keep
            )
            return str(result["compressed_prompt"])
        return compress_extractive(text, ratio, embedder)

    def write(run: Run) -> Draft:
        texts = [shrink(p.text, run.embedder) for p in run.papers]
        return plan_and_write(
            run, texts, temperature, budgets, sees_written, shared_plan, plan_steps_cap
        )

    return write
