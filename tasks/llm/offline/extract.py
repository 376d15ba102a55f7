"""Sentence selection shared by the offline engine's writing handlers (docs/design.md §9).

The engine writes extractively: it reads the papers from the prompt's paper tags (and
RAL-Writer's restated chunks), turns their LaTeX into readable sentences that keep inline
math and emphasis, and picks the sentences that share the most content words with what it
was asked to write. Only sentences the reader took in can be picked (`_reader.py`: with
`llm.offline.middle_neglect` on, the middle of a long prompt is read less), so a known
"lost in the middle" effect can be switched on and checked by the position analysis.
Deterministic throughout.
"""

from __future__ import annotations

import dataclasses
import functools
import math
import re
from collections import Counter
from collections.abc import Iterable
from dataclasses import dataclass

from lilo.tasks.config import OfflineSettings
from lilo.tasks.errors import InputError
from lilo.tasks.formatting import pipe_table
from lilo.tasks.llm.offline._reader import reader
from lilo.tasks.paper_tags import parse_paper_blocks
from lilo.tasks.text import count_words, split_sentences, words

__all__ = [
    "Candidate",
    "candidates",
    "comparison_table",
    "focus_papers",
    "keywords",
    "paper_sentences",
    "paragraphs",
    "query_terms",
    "select",
    "states_length",
    "strip_latex",
    "target_words",
    "title",
]

# Sentences outside these bounds are fragments or run-ons of the LaTeX source.
_MIN_SENTENCE_WORDS, _MAX_SENTENCE_WORDS = 6, 80
# Score bonuses: the step's own paper when the step names it, and restated passages, which
# a model reads right before writing (RAL-Writer's whole point).
_FOCUS_BONUS, _RESTATED_BONUS = 1.0, 0.5

_STOPWORDS = frozenset(
    """about above after again also among an and any approach are around based because been
    before being below between both but can could does doing done due during each either
    et etc even every few for from further given has have having here however into its
    itself just like main many may might more most much must new not now often only other
    our over paper per propose proposed rather same several shall should show shown since
    some such than that the their them then there these they this those through thus under
    upon use used uses using various very via was were what when where whether which while
    who whose why will with within without work would yet""".split()
)
_RESULT_TERM = "result"  # a sentence carrying numbers reports results

_RESTATEMENT_RE = re.compile(r"<restatement>\n(.*?)\n</restatement>", re.S)
_TARGET_RE = re.compile(r"about (\d+) words")
_PAPER_REF_RE = re.compile(r"\bpaper (\d+)\b", re.I)
_FLOAT_RE = re.compile(
    r"\\begin\{(figure|table|tabular|algorithm|lstlisting)(\*?)\}.*?\\end\{\1\2\}", re.S
)
_DISPLAY_RE = re.compile(
    r"\\begin\{(equation|align|gather|multline|eqnarray|displaymath)(\*?)\}(.*?)\\end\{\1\2\}"
    r"|\\\[(.*?)\\\]",
    re.S,
)
_HEADING_RE = re.compile(r"\s*\\(part|chapter|section|subsection|subsubsection|paragraph)\*?\{")
_MATH_RE = re.compile(r"\$\$.*?\$\$|\$[^$]*\$", re.S)
_DROP_RE = re.compile(
    r"\\(?:cite\w*|ref|eqref|autoref|cref|Cref|label|footnote|url)\*?(?:\[[^\]]*\])*\{[^{}]*\}"
)


def strip_latex(text: str) -> str:
    """Readable text: commands dropped or unwrapped, emphasis as Markdown, math kept."""
    text = text.replace("\\$", "USD ")
    parts, last = [], 0
    for match in _MATH_RE.finditer(text):
        parts += [_plain(text[last : match.start()]), match.group(0)]
        last = match.end()
    parts.append(_plain(text[last:]))
    return re.sub(r"\s+([.,;:])", r"\1", re.sub(r"\s+", " ", "".join(parts))).strip()


def _plain(text: str) -> str:
    text = _DROP_RE.sub("", text)
    text = re.sub(r"\\(?:begin|end)\{[^{}]*\}(?:\[[^\]]*\])?", " ", text)
    text = re.sub(r"\\(?:emph|textit)\{([^{}]*)\}", r"*\1*", text)
    text = re.sub(r"\\textbf\{([^{}]*)\}", r"**\1**", text)
    for _ in range(2):  # one level of nesting
        text = re.sub(r"\\[a-zA-Z]+\*?(?:\[[^\]]*\])?\{([^{}]*)\}", r"\1", text)
    text = re.sub(r"\\([%&_#])", r"\1", text)
    text = re.sub(r"\\[a-zA-Z]+\*?|\\\\", " ", text)
    return text.replace("~", " ").replace("{", "").replace("}", "").replace("``", '"')


def _display(match: re.Match[str]) -> str:
    body = match.group(3) if match.group(3) is not None else match.group(4)
    return " $$" + " ".join(_DROP_RE.sub("", body).split()) + "$$ "


@functools.lru_cache(maxsize=256)
def paper_sentences(text: str) -> tuple[str, ...]:
    """A LaTeX text's readable sentences in order; floats and sectioning lines left out."""
    text = _DISPLAY_RE.sub(_display, _FLOAT_RE.sub("\n\n", text))
    sentences: list[str] = []
    for paragraph in re.split(r"\n\s*\n", text):
        body = " ".join(
            line.strip() for line in paragraph.split("\n") if not _HEADING_RE.match(line)
        )
        for sentence in split_sentences(body):
            clean = strip_latex(sentence)
            if clean[:1].isalpha() and (
                _MIN_SENTENCE_WORDS <= count_words(clean) <= _MAX_SENTENCE_WORDS
            ):
                sentences.append(clean)
    return tuple(sentences)


def _norm(word: str) -> str:
    word = word.lower()
    return word[:-1] if len(word) > 4 and word.endswith("s") and word[-2] not in "su" else word


def query_terms(text: str) -> frozenset[str]:
    """Content words, lower-cased and singular, math left out."""
    plain = _MATH_RE.sub(" ", text)
    normed = (_norm(w) for w in words(plain))
    return frozenset(w for w in normed if len(w) > 2 and w not in _STOPWORDS)


@functools.lru_cache(maxsize=1 << 16)
def _sentence_terms(text: str) -> frozenset[str]:
    """A paper sentence's terms (with the result marker when it states a number); every
    prompt that shows the paper asks again, so they are kept."""
    found = query_terms(text)
    return found | {_RESULT_TERM} if re.search(r"\d", _MATH_RE.sub(" ", text)) else found


def keywords(sentences: Iterable[str], n: int, exclude: Iterable[str] = ()) -> list[str]:
    """The n content words found in the most sentences (ties: first seen)."""
    skip = set(exclude) | {_RESULT_TERM}
    counts = Counter(t for s in sentences for t in sorted(query_terms(s)) if t not in skip)
    return [word for word, _ in counts.most_common(n)]


def states_length(prompt: str) -> bool:
    return _TARGET_RE.search(prompt) is not None


def target_words(prompt: str) -> int:
    match = _TARGET_RE.search(prompt)
    if match is None:
        raise InputError(
            "the offline engine reads the length from 'about N words' in the task instruction: "
            "state it in the pack's task template, or use an OpenAI-compatible backend"
        )
    return int(match.group(1))


def focus_papers(text: str) -> frozenset[int]:
    return frozenset(int(m) for m in _PAPER_REF_RE.findall(text))


@dataclass(frozen=True)
class Candidate:
    text: str
    paper: int
    order: int  # reading order across the papers
    weight: float  # 1 if the reader took it in at any of its places in the prompt, else 0
    words: int
    terms: frozenset[str]
    restated: bool = False


def candidates(prompt: str, offline: OfflineSettings) -> list[Candidate]:
    """Every paper sentence the prompt shows, weighted by whether the reader took it in; a
    sentence also restated is marked as such. Restated fragments cut at chunk edges match
    no paper sentence and are left out."""
    size = max(len(prompt), 1)
    read = reader(prompt, offline)
    found: dict[str, Candidate] = {}
    for paper, start, body in parse_paper_blocks(prompt, with_offsets=True):
        sentences = paper_sentences(body)
        for j, text in enumerate(sentences):
            x = (start + (j + 0.5) / len(sentences) * len(body)) / size
            seen = float(read(x, text))
            if text in found:
                old = found[text]
                found[text] = dataclasses.replace(old, weight=max(old.weight, seen))
                continue
            found[text] = Candidate(
                text, paper, len(found), seen, count_words(text), _sentence_terms(text)
            )
    for match in _RESTATEMENT_RE.finditer(prompt):
        block = match.group(1)
        for text in paper_sentences(block):
            if text in found:
                at = match.start(1) + max(block.find(text[:40]), 0)
                old = found[text]
                seen = max(old.weight, float(read(at / size, text)))
                found[text] = dataclasses.replace(old, weight=seen, restated=True)
    return list(found.values())


def select(
    pool: list[Candidate],
    query: frozenset[str],
    budget: int,
    cap: int,
    *,
    focus: frozenset[int] = frozenset(),
    skip: str = "",
    taken: set[str] | None = None,
) -> list[Candidate]:
    """The best sentences for `query` until `budget` words, never past `cap`, in reading
    order. Sentences in `skip` (the text written so far) or `taken` are not used again."""
    taken = taken if taken is not None else set()
    ranked = []
    for c in pool:
        if c.weight <= 0 or c.text in taken or c.text in skip:
            continue
        score = len(c.terms & query) / math.sqrt(len(c.terms) + 1)
        score += _FOCUS_BONUS * (c.paper in focus) + _RESTATED_BONUS * c.restated
        ranked.append((-score * c.weight, c.order, c))
    ranked.sort(key=lambda r: (r[0], r[1]))
    chosen: list[Candidate] = []
    total = 0
    for _, _, c in ranked:
        if total >= budget:
            break
        if total + c.words <= cap:
            chosen.append(c)
            taken.add(c.text)
            total += c.words
    return sorted(chosen, key=lambda c: c.order)


def paragraphs(chosen: list[Candidate]) -> str:
    """Sentences joined into one paragraph per paper, in reading order."""
    groups: list[list[str]] = []
    last = None
    for c in chosen:
        if c.paper != last:
            groups.append([])
            last = c.paper
        groups[-1].append(c.text)
    return "\n\n".join(" ".join(g) for g in groups)


def comparison_table(papers: list[tuple[int, str]], n: int = 3) -> str:
    """A Markdown table of each paper's most frequent topics."""
    header = ["Aspect", *(f"Paper {i}" for i, _ in papers)]
    topics = [", ".join(keywords(paper_sentences(t), n)) for _, t in papers]
    return pipe_table(header, [["Main topics", *topics]])


def title(papers: list[tuple[int, str]]) -> str:
    """A Markdown title from the papers' most frequent content words."""
    top = keywords((s for _, t in papers for s in paper_sentences(t)), 3)
    return "# " + ", ".join(w.capitalize() for w in top) + ": A Review of Related Work"
