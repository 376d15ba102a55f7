"""Compress's built-in extractive compressor (tasks/methods/compress.py) with the default local
embedding model: of each paper it keeps the sentences nearest the paper's centroid, in their
order, and every sectioning line."""

from __future__ import annotations

import importlib.util

from lilo.tasks.methods.compress import compress_extractive
from lilo.tasks.tokens import count_word_tokens

ON_TOPIC = [
    "Gaussian processes place a prior over functions and give calibrated uncertainty.",
    "A Gaussian process regression model predicts with a posterior mean and a variance.",
    "The kernel of a Gaussian process sets how smooth the functions it draws are.",
    "We fit the kernel hyperparameters by maximizing the marginal likelihood of the data.",
    "Sparse inducing points let Gaussian process inference scale to large datasets.",
]
OFF_TOPIC = "The cafeteria on the second floor serves pasta every Friday at noon."
PAPER = "\n".join(
    [r"\section{Introduction}", *ON_TOPIC[:3], "", r"\section{Method}", ON_TOPIC[3], OFF_TOPIC,
     ON_TOPIC[4]]
)  # fmt: skip


def test_the_local_model_keeps_the_paper_s_topic_its_order_and_its_sections(shared_embedder):
    """At 90% of its tokens the paper loses one sentence: the one off its topic, which the
    local model puts farthest from the centroid (the greedy fill reaches it last)."""
    kept = compress_extractive(PAPER, 0.9, shared_embedder)
    assert kept == (
        r"\section{Introduction} " + " ".join(ON_TOPIC[:3]) + "\n\n"
        r"\section{Method} " + " ".join(ON_TOPIC[3:])
    )
    assert count_word_tokens(kept) <= 0.9 * count_word_tokens(PAPER)


def test_a_compressor_asked_for_and_missing_is_lilo_s_line_on_the_generation(tmp_path):
    """compress[llmlingua2] with a model not in the local cache (or no llmlingua package)
    fails its generation with lilo's own error naming what to install or download."""
    from test_formulas import _papers

    from lilo.tasks.config import Settings
    from lilo.tasks.embeddings import Embedder
    from lilo.tasks.llm import make_client
    from lilo.tasks.methods import Unit
    from lilo.tasks.methods.base import get_method
    from lilo.tasks.prompt_packs import lilo_pack
    from lilo.tasks.records import Sample

    settings = Settings(data_dir=tmp_path, generate={"llmlingua_model": "lilo-tests/no-such-model"})
    method = get_method("compress[llmlingua2]", settings.generate, settings.llm, settings.embedding)
    papers = _papers()
    sample = Sample("s1", "v1", tuple(p.paper_id for p in papers), "T", "s", 1, "command")
    generation = method.run(
        Unit(sample, papers, 1000),
        make_client(settings),
        Embedder(settings.embedding, settings.data_dir),
        lilo_pack(),
    )
    missing = (
        "MissingExtra: compress[llmlingua2] cannot run: the llmlingua package is not installed"
        if importlib.util.find_spec("llmlingua") is None
        else "InputError: compress[llmlingua2] cannot run: lilo-tests/no-such-model is not in "
        "the local Hugging Face cache (huggingface-cli download lilo-tests/no-such-model)"
    )
    assert generation.error.startswith(missing), generation.error
    assert generation.error.endswith("; or name compress[extractive]")
