"""Where a benchmark's groups are: its group folders, the description of each group, and
the description ids or question files that have no folder."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

from lilo.tasks.benchmark._assets import Asset, make_asset
from lilo.tasks.benchmark._files import PAPERS_DIR, Files, problem
from lilo.tasks.benchmark._questions import QUESTION_FOLDERS
from lilo.tasks.files import LinkOutside, inside
from lilo.tasks.records import Quarantine

__all__ = ["DESCRIPTION_FILE", "group_folders", "read_descriptions", "report_orphans"]

DESCRIPTION_FILE = "datasetDescription.json"
_GROUP_RE = re.compile(r"^group_(\d+)$")
_QUESTION_FILE_RE = re.compile(r"^group_(\d+)\.json$")


def read_descriptions(
    files: Files, problems: list[Quarantine]
) -> tuple[dict[int, dict[str, Any]], Asset | None]:
    """datasetDescription.json by group id, and the file as an asset."""
    rel = DESCRIPTION_FILE
    if not (files.root / rel).is_file():
        problems.append(
            problem(
                files.item(rel),
                "missing_file",
                f"{files.shown(rel)}: missing: samples get no survey id",
            )
        )
        return {}, None
    found_json = files.read_json_text(rel, problems)
    if found_json is None:
        return {}, None
    data, text = found_json
    if not isinstance(data, list):
        problems.append(
            problem(
                files.item(rel),
                "malformed_json",
                f"{files.shown(rel)}: expected a JSON list of groups: file skipped",
            )
        )
        return {}, None
    found: dict[int, dict[str, Any]] = {}
    for index, entry in enumerate(data):
        key = entry.get("id") if isinstance(entry, dict) else None
        if not isinstance(key, int) or isinstance(key, bool):
            problems.append(
                problem(
                    files.item(f"{rel}#{index}"),
                    "bad_description",
                    f"{files.shown(rel)}#{index}: no integer 'id': entry skipped",
                )
            )
            continue
        found[key] = entry
    return found, make_asset("description.json", text, rel)


def group_folders(files: Files, problems: list[Quarantine]) -> dict[int, Path]:
    folders: dict[int, Path] = {}
    for entry in sorted((files.root / PAPERS_DIR).iterdir()):
        match = _GROUP_RE.match(entry.name)
        try:
            inside(entry, files.given)
        except LinkOutside as exc:
            rel = f"{PAPERS_DIR}/{entry.name}"
            why = str(exc).rpartition(": ")[2]
            problems.append(
                problem(files.item(rel), "link_outside", f"{files.shown(rel)}: {why}: skipped")
            )
            continue
        if entry.is_dir() and match:
            folders[int(match.group(1))] = entry
        elif not entry.name.startswith("."):
            rel = f"{PAPERS_DIR}/{entry.name}"
            problems.append(
                problem(
                    files.item(rel),
                    "unexpected_entry",
                    f"{files.shown(rel)}: not a group_N folder: skipped",
                )
            )
    return folders


def report_orphans(
    files: Files,
    folders: dict[int, Path],
    descriptions: dict[int, dict[str, Any]],
    problems: list[Quarantine],
) -> None:
    """Description ids and question files with no group folder."""
    for number in sorted(set(descriptions) - set(folders)):
        problems.append(
            problem(
                f"{files.name}/group_{number}",
                "missing_group",
                f"{files.shown(DESCRIPTION_FILE)}: id {number} has no folder "
                f"{files.shown(f'{PAPERS_DIR}/group_{number}')}",
            )
        )
    for folder in QUESTION_FOLDERS.values():
        if not (files.root / folder).is_dir():
            continue
        for entry in sorted((files.root / folder).iterdir()):
            match = _QUESTION_FILE_RE.match(entry.name)
            if match and int(match.group(1)) not in folders:
                rel = f"{folder}/{entry.name}"
                problems.append(
                    problem(
                        files.item(rel),
                        "missing_group",
                        f"{files.shown(rel)}: no folder "
                        f"{files.shown(f'{PAPERS_DIR}/group_{match.group(1)}')}: "
                        "questions skipped",
                    )
                )
