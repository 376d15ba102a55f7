"""A benchmark's prompt templates and checklists as dataset assets (docs/design.md §14).

Each is checked before it is stored: a template must compile with Jinja2 and use only the
variables lilo renders it with and plain filters (tasks/prompt_packs/pack.py `template_problem`;
it is rendered in Jinja's sandbox all the same), a checklist must parse with
`parse_checklist`. One that fails is a problem naming its file and is not stored, so lilo's
own stands in for it on runs (`PromptPack.from_assets`).
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass

from lilo.tasks.benchmark._files import MAX_PROMPT_BYTES, Files, problem
from lilo.tasks.prompt_packs import parse_checklist, template_problem
from lilo.tasks.records import Quarantine

__all__ = ["Asset", "make_asset", "read_assets"]

# The published file -> the pack's asset name, with the variables lilo renders it with.
TEMPLATE_FILES: dict[str, tuple[str, frozenset[str]]] = {
    "prompt/survey_gen.jinja": ("task", frozenset({"papers", "length"})),
    "prompt/gpt_qa.jinja": ("qa_answer", frozenset({"paper", "question"})),
    "prompt/judge_qa.jinja": ("qa_judge", frozenset({"question", "answer", "predict"})),
    "prompt/checklist.jinja": (
        "checklist",
        frozenset({"response", "checklists", "num_checklist"}),
    ),
    "prompt/checklist_winrate.jinja": (
        "winrate",
        frozenset({"response_A", "response_B", "checklists", "num_checklist"}),
    ),
}
CHECKLIST_FILES = {
    "checklist/checklist.json": "checklist.json",
    "checklist/checklist_winrate.json": "checklist_winrate.json",
}


@dataclass(frozen=True)
class Asset:
    name: str  # the pack's name (tasks.prompt_packs.ASSET_NAMES) or description.json
    content: str
    source: str  # the file, relative to the dataset folder
    sha256: str


def make_asset(name: str, content: str, source: str) -> Asset:
    return Asset(name, content, source, hashlib.sha256(content.encode("utf-8")).hexdigest())


def read_assets(files: Files) -> tuple[list[Asset], list[str], list[Quarantine]]:
    """(assets stored, pack names lilo's own stands in for, problems)."""
    assets: list[Asset] = []
    stand_ins: list[str] = []
    problems: list[Quarantine] = []
    for rel, (name, variables) in TEMPLATE_FILES.items():
        text = _read(files, rel, problems)
        why = "" if text is None else template_problem(text, variables)
        if text is not None and not why:
            assets.append(make_asset(name, text, rel))
            continue
        stand_ins.append(name)
        if text is not None:
            problems.append(
                problem(
                    files.item(rel),
                    "bad_template",
                    f"{files.shown(rel)}: {why}: not stored, lilo's {name} template stands in",
                )
            )
    for rel, name in CHECKLIST_FILES.items():
        text = _read(files, rel, problems)
        why = "" if text is None else _checklist_problem(text, files.shown(rel))
        if text is not None and not why:
            assets.append(make_asset(name, text, rel))
            continue
        stand_ins.append(name)
        if text is not None:
            problems.append(
                problem(files.item(rel), "bad_checklist", f"{why}: not stored, lilo's stands in")
            )
    return assets, stand_ins, problems


def _read(files: Files, rel: str, problems: list[Quarantine]) -> str | None:
    path = files.root / rel
    if not path.is_file():
        problems.append(
            problem(files.item(rel), "missing_file", f"{files.shown(rel)}: missing: not stored")
        )
        return None
    data = files.read(rel, MAX_PROMPT_BYTES, problems)
    if data is None:
        return None
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as exc:
        problems.append(
            problem(
                files.item(rel),
                "not_utf8",
                f"{files.shown(rel)}: not UTF-8 (byte {exc.start}): not stored",
            )
        )
        return None


def _checklist_problem(text: str, shown: str) -> str:
    try:
        parse_checklist(json.loads(text), shown)
    except json.JSONDecodeError as exc:
        return f"{shown}: malformed JSON ({exc})"
    except RecursionError:
        return f"{shown}: malformed JSON (nested too deeply)"
    except ValueError as exc:
        return str(exc)
    return ""
