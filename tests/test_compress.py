"""Compress's built-in extractive compressor (tasks/methods/compress.py) with the default local
embedding model: of each paper it keeps the sentences nearest the paper's centroid, in their
order, and every sectioning line."""

from __future__ import annotations

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
