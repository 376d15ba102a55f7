"""One way for each thing: backoff is `tasks/backoff.py`'s (no other doubling wait in lilo),
and a token count is one of the two in `tasks/tokens.py` (no ad-hoc `len(text) // 4`)."""

from __future__ import annotations

import re
from pathlib import Path

from lilo.tasks.backoff import BAD_REPLY, WAREHOUSE_LOCK, Backoff
from lilo.tasks.tokens import count_word_tokens

ROOT = Path(__file__).resolve().parent.parent
SOURCES = [p for d in ("flows", "tasks", "warehouse") for p in sorted((ROOT / d).rglob("*.py"))]


def _written(pattern: str, *, besides: str) -> list[str]:
    found = []
    for path in SOURCES:
        name = str(path.relative_to(ROOT))
        if name != besides and re.search(pattern, path.read_text(encoding="utf-8")):
            found.append(name)
    return found


def test_backoff_doubles_up_to_its_cap():
    assert [WAREHOUSE_LOCK.wait_s(n) for n in range(7)] == [0.05, 0.1, 0.2, 0.4, 0.8, 1.6, 2.0]
    assert [BAD_REPLY.wait_s(n) for n in range(6)] == [0.5, 1.0, 2.0, 4.0, 8.0, 8.0]
    assert Backoff(first_s=2.0).wait_s(4) == 32.0  # arXiv's: no cap


def test_no_other_doubling_wait_nor_token_guess():
    assert _written(r"\*\s*2\s*\*\*\s*\w+", besides="tasks/backoff.py") == []
    assert _written(r"\)\s*//\s*4\b", besides="") == []


def test_word_tokens_are_words_and_marks():
    assert count_word_tokens("GPT-4o's limit: 128k tokens.") == 10
