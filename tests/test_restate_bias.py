"""RAL-Writer's position bias at the paper's settings (a = 60, b = 0.3) decides which chunks
are restated: the first chunk, carrying the strongest bias, loses to a less relevant chunk
that the same relevance without the bias (b = 0) would not pick."""

from __future__ import annotations

from lilo.tasks.methods.ral_writer import importance, select_restatements

# 40 chunks, about a 50k-word input cut into 1,024-token chunks with 256 overlap.
N = 40


def _relevance() -> list[float]:
    relevance = [0.30] * N
    relevance[0] = 0.80  # the start of the input: most relevant, and most biased
    relevance[N - 1] = 0.75  # the end: P(N-1) = 0.3 * (1 - 2/N)^60, about 0.014
    relevance[17] = 0.60  # the middle: no bias at all
    relevance[23] = 0.55
    return relevance


def test_the_bias_pushes_the_first_chunk_out_of_the_top_k():
    unbiased = select_restatements(importance(_relevance(), a=60, b=0.0), k=3)
    biased = select_restatements(importance(_relevance(), a=60, b=0.3), k=3)
    assert unbiased == [17, N - 1, 0]  # ascending importance: the most relevant last
    assert biased == [23, 17, N - 1]  # chunk 0 falls to 0.80 - 0.30 = 0.50, below 0.55


def test_at_a_60_the_bias_reaches_past_the_first_chunk_only_at_the_far_end():
    scores = importance(_relevance(), a=60, b=0.3)
    assert scores[0] == 0.80 - 0.30
    assert 0.73 < scores[N - 1] < 0.74  # the last chunk keeps nearly all its relevance
    assert scores[1] == 0.30 - 0.3 * (1 - 2 / N) ** 60
    assert scores[17] == 0.60 and scores[23] == 0.55  # 2i/N - 1 is small: no bias worth naming
