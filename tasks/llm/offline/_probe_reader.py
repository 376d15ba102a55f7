"""The reader of the probes' prompts (docs/design.md §17): the engine's one reader
(`_reader.py`: neglect of the middle as a property of position in the prompt, decided
per line or sentence by its hash), with a prompt's length measured so that a JSON object
of UUIDs is as long as it is. The reader counts words, and a UUID pair holds almost none
by the word rule; where the word count is under `neglect_min_words` the length is
taken as 0.75 words per GPT-4o token (the usual ratio for English prose, so prose keeps
its word count) when that is more."""

from __future__ import annotations

from lilo.tasks.config import OfflineSettings
from lilo.tasks.llm.offline._reader import Reader, reader
from lilo.tasks.text import count_words
from lilo.tasks.tokens import count_gpt4o_tokens

__all__ = ["WORDS_PER_TOKEN", "probe_reader"]

WORDS_PER_TOKEN = 0.75


def probe_reader(prompt: str, offline: OfflineSettings) -> Reader:
    if offline.middle_neglect <= 0:
        return reader(prompt, offline)
    words = count_words(prompt)
    if words < offline.neglect_min_words:
        words = max(words, int(WORDS_PER_TOKEN * count_gpt4o_tokens(prompt)))
    if words < offline.neglect_min_words:
        return lambda x, text: True
    return reader(prompt, offline.model_copy(update={"neglect_min_words": 0}))
