"""Compiled bibliographies (`.bbl`, or a `thebibliography` pasted into the source): what arXiv
often ships instead of the `.bib`.

Three shapes cover what arXiv sources carry:
- BibTeX styles with `\\newblock` (natbib's plainnat, ACL, ICML, plain, unsrt, alpha): authors,
  `\\newblock` title, `\\newblock` venue and year;
- BibTeX styles without it (ieeetr, IEEEtran, siam): authors, ``Title,'' then the venue;
  AAS/ADS styles carry no title at all; revtex's `\\bibinfo{title}{...}` names each field;
- biblatex/biber (`\\entry{key}{type}{} \\field{title}{...} \\verb{eprint} ... \\endentry`).
Each entry gives key, authors, title, venue, year, arXiv id fields, DOI and URL, as plain text.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from lilo.tasks.clean.plain import latex_to_text

__all__ = ["BblEntry", "parse_bbl"]

_BIBITEM = re.compile(r"\\bibitem\s*(\[(?:[^\[\]{}]|\{(?:[^{}]|\{[^{}]*\})*\})*\])?\s*\{([^{}]*)\}")
_END = re.compile(r"\\end\s*\{thebibliography\}")
_ENTRY = re.compile(r"\\entry\s*\{([^{}]*)\}\s*\{([^{}]*)\}(.*?)\\endentry", re.S)
_FIELD = re.compile(r"\\field\s*\{(\w+)\}\s*\{")
_VERB = re.compile(r"\\verb\s*\{(\w+)\}\s*\\verb\s+(.*?)\s*\\endverb", re.S)
_NAME_BLOCK = re.compile(r"\\name\s*\{author\}\s*\{\d+\}\s*\{[^{}]*\}\s*\{")
_NAME_PART = re.compile(r"\b(family|given)=\{((?:[^{}]|\{[^{}]*\})*)\}")
# Biber before 2.x: {{hash=...}{Family}{F.}{Given}{G.}{}{}{}{}}
_PART = r"\{((?:[^{}]|\{[^{}]*\})*)\}"
_OLD_NAME = re.compile(rf"\{{\{{[^{{}}]*\}}{_PART}\{{[^{{}}]*\}}{_PART}")
_BIBINFO = re.compile(r"\\bibinfo\s*\{(\w+)\}\s*\{")
_NEWBLOCK = re.compile(r"\\newblock(?![a-zA-Z@])")
_QUOTED = re.compile(r"``(.+?)(?:,|\.)?''", re.S)
_EMPHASIS = re.compile(r"\\(?:emph|textit|textsl)\s*\{|\{\\(?:em|it|sl)\s")
_HREF = re.compile(r"\\href\s*\{([^{}]*)\}\s*\{")
_URL = re.compile(r"\\url\s*\{([^{}]*)\}|\\href\s*\{([^{}]*)\}")
_DOI = re.compile(r"\b10\.\d{4,9}/[^\s{}\"<>,;]+")
_YEAR = re.compile(r"(?<![\d./:])((?:1[89]|20)\d\d)[a-z]?(?![\d/]|\.\d)")
_LABEL_YEAR = re.compile(r"\(((?:1[89]|20)\d\d)[a-z]?\)")
_TRAILING_YEAR = re.compile(r"[.,]?\s*\(?((?:1[89]|20)\d\d)[a-z]?\)?\.?\s*$")
_AUTHOR_SPLIT = re.compile(r"\s*,\s*(?:and\s+)?|\s+and\s+|\s*&\s*")
_INITIALS = re.compile(r"(?:[A-Z][a-z]?\.[\s-]*)+")
_SENTENCE_END = re.compile(r"(?<=[a-z]{2})\.$")  # `Smith.` ends the list; `G.` is an initial
_ET_AL = re.compile(r"\s*(?:et al\.?|and others)\s*$")
_NOISE = re.compile(
    r"\\(?:penalty0|BibitemOpen|bibAnnoteFile\s*\{[^{}]*\}|BibitemShut\s*\{[^{}]*\}"
    r"|natexlab\s*\{[^{}]*\}|providecommand.*|urlprefix|Eprint|doibase)",
)
_VENUE_FIELDS = ("journaltitle", "journal", "booktitle", "eventtitle", "institution", "school")


@dataclass(frozen=True)
class BblEntry:
    key: str
    title: str = ""
    authors: tuple[str, ...] = ()
    venue: str = ""
    year: str = ""
    doi: str = ""
    url: str = ""
    eprint: str = ""
    eprinttype: str = ""
    text: str = ""  # the entry as written: arXiv ids are also found where it mentions one


def parse_bbl(text: str) -> list[BblEntry]:
    """Every entry of a compiled bibliography, in order; biblatex's shape if it has one."""
    if "\\entry" in text and "\\endentry" in text:
        # Up to the last `\endentry`: past it, each `\entry` would scan to the end in vain.
        end = text.rfind("\\endentry") + len("\\endentry")
        found = _ENTRY.finditer(text, 0, end)
        return [_biblatex(m.group(1).strip(), m.group(3)) for m in found]
    text = _END.split(text, maxsplit=1)[0]
    items = list(_BIBITEM.finditer(text))
    entries: list[BblEntry] = []
    for item, following in zip(items, [*items[1:], None], strict=True):
        body = text[item.end() : following.start() if following else len(text)]
        entries.append(_bibitem(item.group(2).strip(), item.group(1) or "", body))
    return entries


def _biblatex(key: str, body: str) -> BblEntry:
    fields = {m.group(1).lower(): _braced(body, m.end() - 1) for m in _FIELD.finditer(body)}
    end = body.rfind("\\endverb") + len("\\endverb")  # as for `\endentry`
    verbs = {name.lower(): value.strip() for name, value in _VERB.findall(body, 0, end)}
    venue = next((fields[f] for f in _VENUE_FIELDS if fields.get(f)), "")
    return BblEntry(
        key=key,
        title=latex_to_text(fields.get("title", "")),
        authors=_biblatex_names(body),
        venue=latex_to_text(venue),
        year=fields.get("year", "") or fields.get("date", "")[:4],
        doi=verbs.get("doi", "") or fields.get("doi", ""),
        url=verbs.get("url", "") or fields.get("url", ""),
        eprint=verbs.get("eprint", "") or fields.get("eprint", ""),
        eprinttype=fields.get("eprinttype", "") or fields.get("archiveprefix", ""),
        text=body,
    )


def _biblatex_names(body: str) -> tuple[str, ...]:
    block = _NAME_BLOCK.search(body)
    if block is None:
        return ()
    names = _braced(body, block.end() - 1)
    people: list[list[str]] = []
    for part, value in _NAME_PART.findall(names):
        if part == "family" or not people:
            people.append(["", ""])
        people[-1][0 if part == "family" else 1] = value
    if not people:
        people = [[family, given] for family, given in _OLD_NAME.findall(names)]
    return tuple(
        latex_to_text(f"{family}, {given}" if given else family) for family, given in people
    )


def _bibitem(key: str, label: str, body: str) -> BblEntry:
    body = _NOISE.sub(" ", body)
    if "\\bibinfo" in body:
        title, authors, venue = _bibinfo(body)
    elif _NEWBLOCK.search(body):
        title, authors, venue = _blocks(body)
    else:
        title, authors, venue = _quoted(body)
    urls = [u or h for u, h in _URL.findall(body)]
    doi = _DOI.search(body)
    year = _LABEL_YEAR.search(label) or _last(_YEAR, _without_identifiers(body))
    return BblEntry(
        key=key,
        title=title,
        authors=_split_authors(authors),
        venue=venue,
        year=year.group(1) if year else "",
        doi=doi.group(0).rstrip(".)") if doi else "",
        url=next((u.strip() for u in urls if "doi.org" not in u), ""),  # a doi.org link is the DOI
        text=body,
    )


def _blocks(body: str) -> tuple[str, str, str]:
    """natbib/plain shape: authors \\newblock title \\newblock venue ..."""
    blocks = _NEWBLOCK.split(body)
    authors = _TRAILING_YEAR.sub("", blocks[0].strip())  # ACL: "Authors. 2019."
    title = _unlink(blocks[1]) if len(blocks) > 1 else ""
    venue = _venue(blocks[2]) if len(blocks) > 2 else ""
    return _sentence(title), authors, venue


def _quoted(body: str) -> tuple[str, str, str]:
    """ieeetr/IEEEtran shape: authors, ``Title,'' in \\emph{Venue}, ...; AAS: no title."""
    quoted = _QUOTED.search(body, 0, body.rfind("''") + 2)  # as for `\endentry`
    if quoted is None:
        year = _YEAR.search(body)
        return "", body[: year.start()] if year else "", ""
    title = _sentence(_unlink(quoted.group(1)))
    return title, body[: quoted.start()].rstrip(" ,"), _venue(body[quoted.end() :])


def _bibinfo(body: str) -> tuple[str, str, str]:
    """revtex (apsrev): \\bibinfo{author}{...} \\bibinfo{title}{...} \\bibinfo{journal}{...}"""
    info: dict[str, list[str]] = {}
    for match in _BIBINFO.finditer(body):
        info.setdefault(match.group(1), []).append(_braced(body, match.end() - 1))
    venue = next((info[f][0] for f in ("journal", "booktitle", "school") if f in info), "")
    authors = " and ".join(info.get("author", []))
    return _sentence(info.get("title", [""])[0]), authors, latex_to_text(venue)


def _venue(latex: str) -> str:
    """The emphasised name in a venue block (`In \\emph{Proc. X}, pages ...`), or what comes
    before its first comma."""
    emphasis = _EMPHASIS.search(latex)
    if emphasis is not None:
        group = emphasis.end() - 1 if emphasis.group().endswith("{") else emphasis.start()
        return latex_to_text(_braced(latex, group))
    text = latex_to_text(latex)
    return re.sub(r"^In\s+", "", text.split(",")[0]).strip(" .")


def _split_authors(latex: str) -> tuple[str, ...]:
    """`A, B, and C`, `Last, F., Other, G. \\& Third, H.` or `Last, Given and Other, Given`:
    one name per author. A lone surname joins the given names after it; initials join the
    name before them."""
    text = _ET_AL.sub("", latex_to_text(latex).strip(" ,"))
    text = _SENTENCE_END.sub("", text)
    names: list[str] = []
    surname = False
    for part in (p.strip() for p in _AUTHOR_SPLIT.split(text)):
        if not part:
            continue
        if names and (surname or _INITIALS.fullmatch(part)):
            names[-1] = f"{names[-1]}, {part}"
            surname = False
        else:
            names.append(part)
            surname = " " not in part
    return tuple(names)


def _unlink(latex: str) -> str:
    """`\\href{url}{Title}` -> `Title` (ACL styles link the title)."""
    link = _HREF.search(latex)
    return latex if link is None else latex[: link.start()] + _braced(latex, link.end() - 1)


def _sentence(latex: str) -> str:
    return latex_to_text(latex).strip().rstrip(".,").strip()


def _without_identifiers(body: str) -> str:
    return _DOI.sub(" ", re.sub(r"\\url\s*\{[^{}]*\}|arXiv:\S+|\d{4}\.\d{4,5}", " ", body))


def _last(pattern: re.Pattern[str], text: str) -> re.Match[str] | None:
    matches = list(pattern.finditer(text))
    return matches[-1] if matches else None


def _braced(text: str, pos: int) -> str:
    """The brace group opening at `pos` (or, at a `{\\em ...}` switch, the group it sits in),
    without its braces; to the end of `text` when it never closes."""
    depth = 0
    for index in range(pos, len(text)):
        char = text[index]
        if char == "{" and text[index - 1 : index] != "\\":
            depth += 1
        elif char == "}" and text[index - 1 : index] != "\\":
            depth -= 1
            if depth == 0:
                return text[pos + 1 : index]
    return text[pos + 1 :]
