"""The probes' prompts: the authors' templates when the user's clone was imported (stored
with the import as assets of dataset `lost-in-the-middle`, read from the clone's
`src/lost_in_the_middle/prompts/`), else lilo's own, written in lilo's words with the same
structure and placeholders. Both are Python format strings, rendered as the authors'
`prompting.py` renders them: trailing newlines stripped, the KV records as one JSON object
with a pair per line, the documents as `Document [i](Title: ...) text` from i = 1. Asked as
completions (`llm.api`), each is followed by its cue (`COMPLETION_CUES`) and recorded as its
own prompts, `<source>+completions`."""

from __future__ import annotations

import string
from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace
from pathlib import Path

from lilo.tasks.errors import InputError
from lilo.tasks.files import FileTooLarge, read_bounded
from lilo.tasks.probe_records import Document

__all__ = [
    "CLONE_PROMPTS",
    "COMPLETION_CUES",
    "COMPLETIONS",
    "LILO_PROMPTS",
    "MAX_PROMPT_CHARS",
    "PROMPTS_DATASET",
    "ProbePrompts",
    "PromptTooLarge",
    "format_documents",
    "format_kv_records",
    "read_clone_prompts",
]

PROMPTS_DATASET = "lost-in-the-middle"
# lilo's name for each template -> the file in the clone's prompts folder.
CLONE_PROMPTS = {
    "kv_retrieval": "kv_retrieval.prompt",
    "kv_retrieval_query_aware": "kv_retrieval_with_query_aware_contextualization.prompt",
    "qa": "qa.prompt",
    "qa_query_aware": "qa_with_query_aware_contextualization.prompt",
    "closed_book": "closedbook_qa.prompt",
}
_MAX_PROMPT_BYTES = 1_000_000  # a prompt template is a few KB
# The authors' query-aware templates name their key twice; a completion cue adds one more.
_MAX_USES = 3
# A prompt past this many characters (about 10 million tokens) is past the window of any
# endpoint: it is refused before it is built.
MAX_PROMPT_CHARS = 40_000_000

_PLACEHOLDERS = {
    "kv_retrieval": ("{formatted_kv_records}", "{key}"),
    "kv_retrieval_query_aware": ("{formatted_kv_records}", "{key}"),
    "qa": ("{search_results}", "{question}"),
    "qa_query_aware": ("{search_results}", "{question}"),
    "closed_book": ("{question}",),
}

LILO_PROMPTS = {
    "kv_retrieval": (
        "The JSON object below maps keys to values. Return the value that belongs to the "
        'key given after it.\n\nJSON object:\n{formatted_kv_records}\n\nKey: "{key}"\n'
        "Value:"
    ),
    "kv_retrieval_query_aware": (
        "The JSON object below maps keys to values. Return the value that belongs to the "
        'key given here and again after it.\n\nKey: "{key}"\n\nJSON object:\n'
        '{formatted_kv_records}\n\nKey: "{key}"\nValue:'
    ),
    "qa": (
        "Answer the question from the search results alone; not all of them are relevant. "
        "Keep the answer short.\n\n{search_results}\n\nQuestion: {question}\nAnswer:"
    ),
    "qa_query_aware": (
        "Answer the question from the search results alone; not all of them are relevant. "
        "Keep the answer short.\n\nQuestion: {question}\n\n{search_results}\n\n"
        "Question: {question}\nAnswer:"
    ),
    "closed_book": "Answer the question in a few words.\n\nQuestion: {question}\nAnswer:",
}


# The completion form of each template (`llm.api = completions`, docs/design.md §17): its
# text, then where the answer begins. Key-value retrieval ends in the records' own line format
# (` "<key>": "`; the task stops the reply at `"`); QA ends at its template's `Answer:` (the
# task stops the reply at the line's end).
COMPLETION_CUES = {
    "kv_retrieval": '\n "{key}": "',
    "kv_retrieval_query_aware": '\n "{key}": "',
    "qa": "",
    "qa_query_aware": "",
    "closed_book": "",
}
# What the completion form adds to the prompts' source, recorded with every answer.
COMPLETIONS = "+completions"


def read_clone_prompts(
    clone: Path, hard_links: bool = False
) -> tuple[dict[str, tuple[str, str]], list[str]]:
    """{name: (template, file)} of the clone's prompt files, and one line per problem (a
    file missing, or without the placeholders the probes fill)."""
    folder = clone / "src" / "lost_in_the_middle" / "prompts"
    found: dict[str, tuple[str, str]] = {}
    problems = []
    for name, filename in CLONE_PROMPTS.items():
        path = folder / filename
        relative = path.relative_to(clone).as_posix()
        if not path.is_file():
            problems.append(f"{relative}: missing; lilo's own {name} prompt stands in")
            continue
        try:
            text = read_bounded(path, _MAX_PROMPT_BYTES, clone, hard_links).decode("utf-8")
        except FileTooLarge as exc:
            why = str(exc).rpartition(": ")[2]
            problems.append(f"{relative}: {why}; lilo's own {name} prompt stands in")
            continue
        except UnicodeDecodeError as exc:
            problems.append(f"{relative}: not UTF-8 (byte {exc.start}); lilo's own stands in")
            continue
        missing = [p for p in _PLACEHOLDERS[name] if p not in text]
        if missing:
            problems.append(f"{relative}: lacks {', '.join(missing)}; lilo's own stands in")
            continue
        if other := _beyond_placeholders(text, _PLACEHOLDERS[name]):
            problems.append(
                f"{relative}: uses {other}, a prompt may use only "
                f"{', '.join(_PLACEHOLDERS[name])}; lilo's own stands in"
            )
            continue
        if over := _repeated(text):
            problems.append(
                f"{relative}: uses {over}, a prompt may use each placeholder at most "
                f"{_MAX_USES} times; lilo's own stands in"
            )
            continue
        found[name] = (text, relative)
    return found, problems


def _repeated(text: str) -> str:
    """The first placeholder a template uses more than `_MAX_USES` times, with its count."""
    uses = Counter(f for _, f, _, _ in string.Formatter().parse(text) if f is not None)
    over = [(field, n) for field, n in uses.items() if n > _MAX_USES]
    return "".join(f"{{{field}}} {n:,} times" for field, n in over[:1])


def _beyond_placeholders(text: str, placeholders: Sequence[str]) -> str:
    """The first replacement field of a format string other than the plain placeholders
    (`{key.__class__}`, `{key:>99999999}`, `{0}`), "" when there is none."""
    try:
        fields = list(string.Formatter().parse(text))
    except ValueError as exc:
        return f"a malformed field ({exc})"
    for _, field, spec, conversion in fields:
        if field is not None and (f"{{{field}}}" not in placeholders or spec or conversion):
            return (
                "{"
                + field
                + (f"!{conversion}" if conversion else "")
                + (f":{spec}" if spec else "")
                + "}"
            )
    return ""


class PromptTooLarge(InputError):
    """A template that would build a prompt past any endpoint's window."""


@dataclass(frozen=True)
class ProbePrompts:
    """The templates a probe run renders and whose they are (`lost-in-the-middle` or
    `lilo`, recorded with every answer), as chat prompts or in their completion form."""

    source: str
    templates: Mapping[str, str]
    completions: bool = False

    @classmethod
    def choose(cls, stored: Mapping[str, str]) -> ProbePrompts:
        """The clone's templates when all of them were imported, else lilo's own."""
        if all(name in stored for name in CLONE_PROMPTS):
            return cls(PROMPTS_DATASET, dict(stored))
        return cls("lilo", LILO_PROMPTS)

    def as_completions(self) -> ProbePrompts:
        """The same templates in their completion form, recorded as `<source>+completions`."""
        return replace(self, source=self.source + COMPLETIONS, completions=True)

    def _render(self, name: str, **values: str) -> str:
        """The prompt; PromptTooLarge, before it is built, when it would be longer than
        `MAX_PROMPT_CHARS`."""
        cue = COMPLETION_CUES[name] if self.completions else ""
        template = self.templates[name].rstrip("\n") + cue
        size = sum(
            len(literal) + (len(values[field]) if field else 0)
            for literal, field, _, _ in string.Formatter().parse(template)
        )
        if size > MAX_PROMPT_CHARS:
            raise PromptTooLarge(
                f"the {self.source} {name} prompt would be {size:,} characters, past the "
                f"{MAX_PROMPT_CHARS:,} of any endpoint's window: import the authors' templates "
                "again, or give fewer keys or documents"
            )
        return template.format(**values)

    def kv(self, records: Sequence[tuple[str, str]], key: str, query_aware: bool) -> str:
        name = "kv_retrieval_query_aware" if query_aware else "kv_retrieval"
        return self._render(name, formatted_kv_records=format_kv_records(records), key=key)

    def qa(self, question: str, documents: Sequence[Document], query_aware: bool) -> str:
        name = "qa_query_aware" if query_aware else "qa"
        return self._render(name, search_results=format_documents(documents), question=question)

    def closed_book(self, question: str) -> str:
        return self._render("closed_book", question=question)


def format_kv_records(records: Sequence[tuple[str, str]]) -> str:
    """`{"k1": "v1",` / ` "k2": "v2",` / ... / ` "kn": "vn"}`: one pair a line."""
    last = len(records) - 1
    return "".join(
        ("{" if i == 0 else " ") + f'"{k}": "{v}"' + (",\n" if i != last else "}")
        for i, (k, v) in enumerate(records)
    )


def format_documents(documents: Sequence[Document]) -> str:
    return "\n".join(
        f"Document [{i}](Title: {d['title']}) {d['text']}" for i, d in enumerate(documents, 1)
    )
