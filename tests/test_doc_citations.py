"""The repository stands alone: every section the code and docs cite exists in
`docs/design.md`, every document they name exists, and nothing cites what a user's clone
does not hold (a design document kept elsewhere, a style guide, an issue tracker)."""

from __future__ import annotations

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
FOLDERS = ("flows", "tasks", "warehouse", "expectations", "deployments", "tests", "bench", "docs")
SUFFIXES = {".py", ".sql", ".md", ".yaml", ".toml", ".jinja", ".json"}
SECTION = re.compile(r"docs/design\.md §§?\s?(\d+)(?:\s?(?:,|and|-)\s?§?(\d+))*")
CITED_DOC = re.compile(r"\bdocs/([a-z][a-z0-9-]*\.md)\b")
FOREIGN = re.compile(r"DESIGN(?:\.md)? ?§|STYLE\.md|\.\./shared/|\bissues? \d+\b")


def _files() -> list[Path]:
    files = [ROOT / "README.md", ROOT / "pyproject.toml"]
    for folder in FOLDERS:
        files += [
            p
            for p in (ROOT / folder).rglob("*")
            if p.suffix in SUFFIXES and "corpus" not in p.parts and "__pycache__" not in p.parts
        ]
    return [p for p in files if p.resolve() != Path(__file__).resolve()]


def _sections() -> set[int]:
    text = (ROOT / "docs" / "design.md").read_text(encoding="utf-8")
    return {int(n) for n in re.findall(r"^## (\d+)\. ", text, re.M)}


def test_every_cited_design_section_exists():
    sections = _sections()
    assert sections == set(range(1, max(sections) + 1)), "sections are numbered 1..N"
    missing = []
    for path in _files():
        text = path.read_text(encoding="utf-8", errors="replace")
        for match in re.finditer(r"docs/design\.md ((?:§+\s?\d+(?:\s?(?:,|and|-)\s?)?)+)", text):
            for number in re.findall(r"\d+", match.group(1)):
                if int(number) not in sections:
                    missing.append(f"{path.relative_to(ROOT)}: §{number}")
    assert missing == []


def test_every_cited_document_exists():
    missing = [
        f"{path.relative_to(ROOT)}: docs/{name}"
        for path in _files()
        for name in CITED_DOC.findall(path.read_text(encoding="utf-8", errors="replace"))
        if not (ROOT / "docs" / name).exists()
    ]
    assert missing == []


def test_nothing_cites_what_the_repository_does_not_hold():
    found = [
        f"{path.relative_to(ROOT)}:{n}: {line.strip()}"
        for path in _files()
        for n, line in enumerate(path.read_text(encoding="utf-8", errors="replace").splitlines(), 1)
        if FOREIGN.search(line)
    ]
    assert found == []


def test_the_docs_state_winrate_against_s_default_as_the_code_has_it():
    """Every sentence that gives `winrate_against` a default gives the code's (empty: off)."""
    from lilo.tasks.config import Settings

    default = Settings.model_fields["winrate_against"].default
    allowed = {default} if default else {"empty", "off"}
    stated = re.compile(
        r"winrate_against`[^.]{0,60}?(?:default `?([\w\[\]-]+)|`?([\w-]+)`? by default)"
    )
    found = []
    for path in [ROOT / "README.md", *(ROOT / "docs").glob("*.md")]:
        for match in stated.finditer(path.read_text(encoding="utf-8")):
            found.append((path.name, match.group(1) or match.group(2)))
    assert found and all(value in allowed for _, value in found), found
