"""A benchmark's method templates and the prompt text its scripts hold as string literals,
read from the user's clone (docs/design.md §14): the planner and writer templates
(`src/template/<name>.jinja`), the checklist judge's system message (the `content` of the
`"role": "system"` message in `experiments/quality_score.py`) and the sentence the QA
answerer appends to its prompt (the string added to the `"role": "user"` content in
`experiments/consistency_score.py`). The scripts are parsed with `ast`, never run; lilo
holds none of their text. One that is missing or holds no such literal is one problem line,
and the asset is absent (lilo's own prompt stands in)."""

from __future__ import annotations

import ast
from collections.abc import Callable
from pathlib import Path

from lilo.tasks.benchmark._assets import Asset, make_asset
from lilo.tasks.benchmark._files import MAX_PROMPT_BYTES, Files, problem
from lilo.tasks.files import FileTooLarge, read_bounded
from lilo.tasks.prompt_packs import METHOD_TEMPLATES, template_problem
from lilo.tasks.records import Quarantine

__all__ = ["read_method_assets"]

TEMPLATE_DIR = "src/template"
# The variables the reference's agents pass to these templates (src/agent/*.py); `text` is
# what ConcatAgent passes to write_step (docs/reference.md).
METHOD_VARIABLES = frozenset(
    {"instruction", "plan", "step", "written", "text", "restatement", "keys"}
)


def _literal(node: ast.expr | None) -> str | None:
    return node.value if isinstance(node, ast.Constant) and isinstance(node.value, str) else None


def _message_content(tree: ast.AST, role: str) -> list[ast.expr]:
    """The `content` values of every `{"role": role, "content": ...}` dict literal."""
    found = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Dict):
            items = {_literal(k): v for k, v in zip(node.keys, node.values, strict=True)}
            if _literal(items.get("role")) == role and "content" in items:
                found.append(items["content"])
    return found


def system_message(tree: ast.AST) -> str | None:
    """The first system message given as a string literal."""
    return next((t for c in _message_content(tree, "system") if (t := _literal(c))), None)


def appended_sentence(tree: ast.AST) -> str | None:
    """The string literal added to a user message's rendered prompt (`prompt + "..."`)."""
    for content in _message_content(tree, "user"):
        if isinstance(content, ast.BinOp) and isinstance(content.op, ast.Add):
            if (text := _literal(content.right)) is not None:
                return text
    return None


SCRIPTS: dict[str, tuple[str, Callable[[ast.AST], str | None], str]] = {
    "checklist_system": ("experiments/quality_score.py", system_message, "system message"),
    "qa_answer_suffix": (
        "experiments/consistency_score.py",
        appended_sentence,
        "sentence appended to the QA answer prompt",
    ),
}


def read_method_assets(files: Files) -> tuple[list[Asset], list[Quarantine]]:
    """The clone's method templates and script strings (`Files.clone`); each missing or
    unusable one is a problem and absent."""
    clone = files.clone
    assets: list[Asset] = []
    problems: list[Quarantine] = []
    for name in METHOD_TEMPLATES:
        rel = f"{TEMPLATE_DIR}/{name}.jinja"
        text, why = _read(clone / rel, files)
        if text is not None:
            why = template_problem(text, METHOD_VARIABLES)
        if not why:
            assets.append(make_asset(name, str(text), rel))
        else:
            problems.append(
                problem(f"{files.name}/{rel}", "method_template", f"{rel}: {why}: lilo's stands in")
            )
    for name, (rel, find, what) in SCRIPTS.items():
        text, why = _read(clone / rel, files)
        found = None
        if text is not None:
            try:
                found = find(ast.parse(text))
            except SyntaxError as exc:
                why = f"not Python (line {exc.lineno})"
            except (RecursionError, MemoryError):
                why = "not Python (nested too deeply)"
            else:
                why = "" if found else f"no {what} as a string literal"
        if found:
            assets.append(make_asset(name, found, rel))
        else:
            problems.append(
                problem(
                    f"{files.name}/{rel}#{name}",
                    "script_string",
                    f"{rel}: {why}: {name} absent, lilo's own prompt stands in",
                )
            )
    return assets, problems


def _read(path: Path, files: Files) -> tuple[str | None, str]:
    if not path.is_file():
        return None, "missing"
    try:
        data = read_bounded(path, MAX_PROMPT_BYTES, within=files.given, hard_links=files.hard_links)
        return data.decode("utf-8"), ""
    except FileTooLarge as exc:
        return None, str(exc).rpartition(": ")[2]
    except UnicodeDecodeError as exc:
        return None, f"not UTF-8 (byte {exc.start})"
