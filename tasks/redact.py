"""Secrets out of error text and replies. What an endpoint answers is untrusted: some echo
the request's `Authorization: Bearer sk-...` header in a 400 or in a completion, and error
text is logged, stored (quarantine, fct_llm_calls, run records) and published. `redact` runs
wherever such text is kept or shown; `redact_reply` on every reply as it comes in, before it
is cached, stored or shown.
"""

from __future__ import annotations

import os
import re

from lilo.tasks.config import Settings

__all__ = ["configured_secrets", "redact", "redact_reply", "redacted"]

REDACTED = "[redacted]"
# A bearer token, an OpenAI-style key (`sk-...`, `sk-proj-...`): whatever the settings hold.
_PATTERNS = re.compile(r"(?i)(?<=\bbearer )\s*[^\s'\",;]+|\bsk-[A-Za-z0-9_\-]{6,}")
_ENV_KEYS = (
    "OPENAI_API_KEY",
    "LILO_LLM__API_KEY",
    "LILO_JUDGE__API_KEY",
    "LILO_EMBEDDING__API_KEY",
)
_SHORTEST = 4  # a shorter "key" would redact ordinary words


def configured_secrets(settings: Settings | None = None) -> list[str]:
    """The API keys in `settings` and in the environment variables they may come from."""
    keys = [os.environ.get(name) for name in _ENV_KEYS]
    if settings is not None:
        keys += settings.secret_values()
    return sorted({k for k in keys if k and len(k) >= _SHORTEST}, key=len, reverse=True)


def redact(text: str, secrets: list[str] | None = None) -> str:
    """`text` with each secret, bearer token and `sk-` key replaced by `[redacted]`."""
    for secret in secrets if secrets is not None else configured_secrets():
        text = text.replace(secret, REDACTED)
    return _PATTERNS.sub(REDACTED, text)


def redacted(exc: BaseException, settings: Settings | None = None) -> str:
    """`Type: message` of an exception, redacted: the one line that records an error."""
    return redact(f"{type(exc).__name__}: {exc}", configured_secrets(settings))


def redact_reply(text: str, secrets: list[str]) -> tuple[str, int]:
    """A reply's text with each configured secret replaced by `[redacted]`, and how many
    were (a model's own words that look like a key are its words: kept)."""
    found = 0
    for secret in secrets:
        found += text.count(secret)
        text = text.replace(secret, REDACTED)
    return text, found
