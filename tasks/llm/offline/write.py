"""Offline handler for the bare task instruction, which Single sends (docs/design.md §7, §9): the
whole summary in one reply, section by section, from the sentences that best match each
section. It is the last resort: any prompt showing papers and "about N words" that no other
handler took. One reply never exceeds `max_words_per_reply`, as real chat models stop long
before 8k-16k words: that is why Single scores low on length for long targets."""

from __future__ import annotations

from lilo.tasks.config import OfflineSettings
from lilo.tasks.llm.offline.base import offline_reply
from lilo.tasks.llm.offline.extract import (
    candidates,
    comparison_table,
    keywords,
    paper_sentences,
    paragraphs,
    query_terms,
    select,
    states_length,
    target_words,
    title,
)
from lilo.tasks.llm.types import Message
from lilo.tasks.paper_tags import parse_paper_blocks
from lilo.tasks.text import count_words


def matches(prompt: str) -> bool:
    return states_length(prompt) and bool(parse_paper_blocks(prompt))


# Share of the length per section; the papers' own sections split theirs equally.
_INTRO, _PAPERS, _COMMON, _RESULTS, _CONCLUSION = 0.15, 0.5, 0.1, 0.15, 0.1


@offline_reply("write", matches=matches, priority=9)
def respond(messages: list[Message], offline: OfflineSettings) -> str:
    prompt = "\n".join(m["content"] for m in messages)
    papers = parse_paper_blocks(prompt)
    field = " ".join(keywords((s for _, t in papers for s in paper_sentences(t)), 6))
    sections: list[tuple[str, str, float, frozenset[int]]] = [
        ("Introduction", f"{field} history progress challenge", _INTRO, frozenset())
    ]
    for i, text in papers:
        topics = " ".join(keywords(paper_sentences(text), 6))
        share = _PAPERS / max(len(papers), 1)
        sections.append((f"The work of paper {i}", topics, share, frozenset({i})))
    sections += [
        ("Commonalities and innovations", f"{field} novel contribution", _COMMON, frozenset()),
        ("Comparison of results", "result performance accuracy compared", _RESULTS, frozenset()),
        (
            "Conclusion and future directions",
            "future limitation direction",
            _CONCLUSION,
            frozenset(),
        ),
    ]
    table = comparison_table(papers)
    fixed = count_words("\n".join([title(papers), table, *(s[0] for s in sections)]))
    cap = offline.max_words_per_reply - fixed
    room = min(target_words(prompt), offline.max_words_per_reply) - fixed
    pool = candidates(prompt, offline)
    taken: set[str] = set()
    parts, used = [title(papers)], 0
    for heading, query, share, focus in sections:
        chosen = select(
            pool, query_terms(query), round(share * room), cap - used, focus=focus, taken=taken
        )
        used += sum(c.words for c in chosen)
        parts.append(f"## {heading}")
        if heading.startswith("Comparison"):
            parts.append(table)
        parts.append(paragraphs(chosen))
    return "\n\n".join(p for p in parts if p)
