"""Prompts and checklists as data of a dataset version (docs/design.md §14; "Prompts are
data").

A `PromptPack` holds the Jinja2 templates a run renders for the task instruction, the QA
answer, the QA judge, the checklist judge and the win-rate judge, with the checklists they
grade against. lilo's own datasets use the pack in `tasks/prompt_packs/lilo/`; an imported
benchmark carries its own (stored in `dim_dataset_assets`), so a run on the published
benchmark renders the benchmark's prompts without lilo ever copying them.

Template variables follow the published benchmark: task `papers`, `length`; QA answer
`paper` (the text answered from), `question`; QA judge `question`, `answer`, `predict`;
checklist `response`, `checklists`, `num_checklist`; win-rate `response_A`, `response_B`,
`checklists`, `num_checklist`.

A benchmark's templates come from the user's clone: they are checked at import
(`template_problem`: only their variables, the names they bind, `loop`'s counters and plain
filters and tests) and always rendered in Jinja's sandbox, so a template never runs code.
"""

from __future__ import annotations

import functools
import hashlib
import json
import re
from dataclasses import dataclass, field
from importlib import resources
from typing import Any

import jinja2
from jinja2 import meta, nodes

from lilo.tasks.prompt_packs._bounded import (
    BoundedEnvironment,
    TemplateTooCostly,
    render_within,
)

__all__ = [
    "ASSET_NAMES",
    "METHOD_TEMPLATES",
    "SCRIPT_STRINGS",
    "TEMPLATES",
    "ChecklistItem",
    "PromptPack",
    "key_requirements",
    "lilo_pack",
    "parse_checklist",
    "prompt_template",
    "reference_template",
    "template_problem",
]

TEMPLATES = ("task", "qa_answer", "qa_judge", "checklist", "winrate")
# A benchmark's method templates (planner and writer), rendered by the methods on that
# dataset version; lilo's own datasets use `tasks/methods/templates/`.
METHOD_TEMPLATES = (
    "plan",
    "write_begin",
    "write_step",
    "write_begin_with_restate",
    "write_step_with_restate",
)
# Prompt text a benchmark's scripts hold as string literals (read from the user's clone):
# the checklist judge's system message and the sentence appended to the QA answer prompt.
SCRIPT_STRINGS = ("checklist_system", "qa_answer_suffix")
CHECKLIST, WINRATE_CHECKLIST = "checklist.json", "checklist_winrate.json"
ASSET_NAMES = (*TEMPLATES, *METHOD_TEMPLATES, *SCRIPT_STRINGS, CHECKLIST, WINRATE_CHECKLIST)
LEVELS = (0.0, 0.25, 0.5, 0.75, 1.0)

_KEYS_RE = re.compile(r"<keys>(.*?)</keys>", re.S)
_LEVEL_RE = re.compile(r"^\s*(0(?:\.25|\.5|\.75)?|1(?:\.0)?)\s*:\s*(.*)$", re.S)


@dataclass(frozen=True)
class ChecklistItem:
    """One checklist question with its level descriptions (0 ... 1); a win-rate item may
    have none."""

    aspect: str
    index: int
    question: str
    levels: tuple[tuple[float, str], ...] = ()
    # The item exactly as its checklist file holds it (JSON value as `json.loads` gives it:
    # dict metrics stay dicts, key order kept): what the judge is shown.
    published: Any = field(default=None, compare=False)

    def as_prompt(self) -> dict[str, Any]:
        """What the judge is shown for this item: the item as published; for an item built
        in code, its question and its own levels."""
        content: Any = self.published
        if content is None:
            content = {"question": self.question}
            if self.levels:
                content["metrics"] = [f"{_level(v)}: {d}" for v, d in self.levels]
        return {"checklist_id": self.index, "checklist_content": content}


def _level(value: float) -> str:
    return f"{value:g}"


def parse_checklist(data: Any, where: str) -> dict[str, list[ChecklistItem]]:
    """{aspect: [{question, metrics}]} with metrics as ["0: ...", ...] or {"0": "..."};
    or {aspect: [question]} (win-rate). ValueError names `where` and what is wrong."""
    if not isinstance(data, dict) or not data:
        raise ValueError(f"{where}: expected a JSON object of aspects")
    aspects: dict[str, list[ChecklistItem]] = {}
    for aspect, items in data.items():
        if not isinstance(items, list) or not items:
            raise ValueError(f"{where}: aspect {aspect!r} needs a non-empty list of items")
        parsed = []
        for i, item in enumerate(items):
            if isinstance(item, str):
                parsed.append(ChecklistItem(aspect, i, item.strip(), published=item))
                continue
            if not isinstance(item, dict) or not isinstance(item.get("question"), str):
                raise ValueError(f"{where}: {aspect}[{i}] needs a 'question' string")
            levels = _levels(item.get("metrics"), f"{where}: {aspect}[{i}]")
            parsed.append(ChecklistItem(aspect, i, item["question"].strip(), levels, item))
        aspects[str(aspect)] = parsed
    return aspects


def _levels(metrics: Any, where: str) -> tuple[tuple[float, str], ...]:
    pairs: list[tuple[str, str]] = []
    if isinstance(metrics, dict):
        pairs = [(str(k), str(v)) for k, v in metrics.items()]
    elif isinstance(metrics, list):
        for line in metrics:
            match = _LEVEL_RE.match(str(line))
            if match is None:
                raise ValueError(f"{where}: level {line!r} does not start with 0..1 and ':'")
            pairs.append((match.group(1), match.group(2)))
    else:
        raise ValueError(f"{where}: 'metrics' must be a list or an object of 5 levels")
    levels = tuple(sorted((float(k), v.strip()) for k, v in pairs))
    if tuple(v for v, _ in levels) != LEVELS:
        raise ValueError(f"{where}: levels must be exactly 0, 0.25, 0.5, 0.75, 1")
    return levels


def key_requirements(instruction: str) -> str:
    """The task's key requirements: the `<keys>` block of a rendered instruction ("" if
    the template has none). RAL-Writer restates them on every step after the first."""
    match = _KEYS_RE.search(instruction)
    return match.group(1).strip() if match else ""


@dataclass(frozen=True)
class PromptPack:
    """A dataset version's templates and checklists; `name` says where they come from."""

    name: str
    templates: dict[str, str] = field(repr=False)
    checklist: dict[str, list[ChecklistItem]] = field(repr=False)
    winrate_checklist: dict[str, list[ChecklistItem]] = field(repr=False)
    # The benchmark's own method templates and script strings (METHOD_TEMPLATES,
    # SCRIPT_STRINGS) where it has them; empty for lilo's pack.
    extras: dict[str, str] = field(default_factory=dict, repr=False)
    # A published benchmark's pack (from stored assets): its judges follow that benchmark's
    # protocol (the QA grade as structured output holding only the score); lilo's own pack
    # keeps lilo's (a free JSON grade with its reason).
    benchmark: bool = False

    def render(self, template: str, **variables: Any) -> str:
        return prompt_template(self.templates[template]).render(**variables)

    def fingerprint(self) -> str:
        """Changes whenever a template or checklist does: part of generation ids."""
        blob = json.dumps(
            [self.templates, _plain(self.checklist), _plain(self.winrate_checklist)]
            + ([self.extras] if self.extras else []),
            sort_keys=True,
        )
        return hashlib.sha256(blob.encode()).hexdigest()[:16]

    @classmethod
    def from_assets(cls, name: str, assets: dict[str, str]) -> PromptPack:
        """A pack from stored assets; one that lacks some falls back to lilo's for those."""
        base = lilo_pack()
        templates = {t: assets.get(t, base.templates[t]) for t in TEMPLATES}
        checklist = (
            parse_checklist(json.loads(assets[CHECKLIST]), f"{name}/{CHECKLIST}")
            if CHECKLIST in assets
            else base.checklist
        )
        winrate = (
            parse_checklist(json.loads(assets[WINRATE_CHECKLIST]), f"{name}/{WINRATE_CHECKLIST}")
            if WINRATE_CHECKLIST in assets
            else checklist
        )
        extras = {n: assets[n] for n in (*METHOD_TEMPLATES, *SCRIPT_STRINGS) if n in assets}
        return cls(name, templates, checklist, winrate, extras, benchmark=True)


def _plain(checklist: dict[str, list[ChecklistItem]]) -> dict[str, Any]:
    return {a: [(i.question, i.levels) for i in items] for a, items in checklist.items()}


# Prompts are plain text, not HTML: no autoescaping. In the sandbox: no attribute that
# starts with `_`, no method that changes a value, whatever a template holds.
# Each render has a deadline and a size bound (tasks/prompt_packs/_bounded.py).
_PACK = BoundedEnvironment(autoescape=False, undefined=jinja2.StrictUndefined)
# As the reference compiles its method templates (`jinja2.Template(text)`): a variable it
# does not pass renders empty, a trailing newline is dropped.
_REFERENCE = BoundedEnvironment()

# What a template from outside lilo may use besides text, its variables and the names its own
# `for` and `set` bind: these statements and operators, `loop`'s counters, plain filters and
# tests. No other attribute, no subscript, no call, no macro, no import.
_PLAIN = (
    nodes.Template, nodes.Output, nodes.TemplateData, nodes.Name, nodes.Const, nodes.For,
    nodes.If, nodes.Assign, nodes.Compare, nodes.Operand, nodes.And, nodes.Or, nodes.Not,
    nodes.Concat, nodes.CondExpr, nodes.Add, nodes.Sub, nodes.Neg, nodes.Pos, nodes.Tuple,
    nodes.List, nodes.Keyword,
)  # fmt: skip
_LOOP = frozenset(
    {"index", "index0", "revindex", "revindex0", "first", "last", "length", "depth", "depth0"}
)
_FILTERS = frozenset(
    {"abs", "capitalize", "count", "d", "default", "e", "escape", "first", "float", "int"}
    | {"join", "last", "length", "list", "lower", "max", "min", "reverse", "round", "safe"}
    | {"sort", "string", "striptags", "sum", "title", "tojson", "trim", "truncate", "unique"}
    | {"upper", "wordcount"}
)
_TESTS = frozenset(
    {"boolean", "defined", "divisibleby", "eq", "even", "false", "float", "ge", "gt", "in"}
    | {"integer", "iterable", "le", "lower", "lt", "mapping", "ne", "none", "number", "odd"}
    | {"sequence", "string", "true", "undefined", "upper"}
)


def _beyond_plain(node: nodes.Node) -> str:
    """What `node` is when a template from outside lilo may not use it, else ""."""
    if isinstance(node, nodes.Filter):
        return "" if node.name in _FILTERS else f"the filter {node.name}"
    if isinstance(node, nodes.Test):
        return "" if node.name in _TESTS else f"the test {node.name}"
    if isinstance(node, nodes.Getattr):
        looped = isinstance(node.node, nodes.Name) and node.node.name == "loop"
        return "" if looped and node.attr in _LOOP else f"the attribute {node.attr}"
    if type(node) in _PLAIN:
        return ""
    described: dict[type[nodes.Node], str] = {nodes.Getitem: "a subscript", nodes.Call: "a call"}
    return described.get(type(node), f"{{% {type(node).__name__.lower()} %}}")


def template_problem(source: str, variables: frozenset[str]) -> str:
    """Why a template from outside lilo (a benchmark's, read from the user's clone) may not
    be used, "" when it may: it must parse, and use only `variables` (those lilo renders it
    with), the names it binds itself, `loop`'s counters and plain filters and tests."""
    try:
        return _problem(source, variables)
    except RecursionError:  # `{{ ((((...)))) }}`: Jinja parses and compiles recursively
        return "nested too deeply"


def _problem(source: str, variables: frozenset[str]) -> str:
    try:
        tree = _PACK.parse(source)
    except jinja2.TemplateSyntaxError as exc:
        return f"Jinja2 syntax error on line {exc.lineno}: {exc.message}"
    for node in tree.find_all(nodes.Node):
        if what := _beyond_plain(node):
            return (
                f"uses {what} on line {node.lineno}: a template may use only its variables, "
                "loop's counters and plain filters"
            )
    unknown = sorted(meta.find_undeclared_variables(tree) - variables)
    if unknown:
        return f"uses {', '.join(unknown)}; lilo renders it with {', '.join(sorted(variables))}"
    return _trial_problem(source, variables)


# A trial render's inputs: each variable as a paper-sized text (papers: three of them), the
# length a number, a counted list a number.
_TRIAL_TEXT = "word " * 20_000
_TRIAL_SECONDS = 2.0
_TRIAL_VALUES: dict[str, Any] = {"papers": [_TRIAL_TEXT] * 3, "length": 8000, "num_checklist": 5}


def _trial_problem(source: str, variables: frozenset[str]) -> str:
    """Why rendering `source` with paper-sized inputs goes past its bounds, "" if it does not."""
    given = {v: _TRIAL_VALUES.get(v, _TRIAL_TEXT) for v in variables}
    try:
        render_within(_PACK.from_string(source), _TRIAL_SECONDS, given)
    except TemplateTooCostly as exc:
        return f"{exc} with paper-sized inputs"
    except (jinja2.TemplateError, TypeError, ValueError, ArithmeticError):
        return ""  # an input it does not expect: its render fails where it is used
    return ""


@functools.lru_cache(maxsize=64)
def prompt_template(source: str) -> jinja2.Template:
    """A prompt template (a pack's, lilo's or a benchmark's, or a method's own), in the
    sandbox; a missing variable is an error."""
    return _PACK.from_string(source)


@functools.lru_cache(maxsize=32)
def reference_template(source: str) -> jinja2.Template:
    """A benchmark's method template as the reference compiles it, in the sandbox."""
    return _REFERENCE.from_string(source)


@functools.cache
def lilo_pack() -> PromptPack:
    """lilo's own templates and checklist (`tasks/prompt_packs/lilo/`)."""
    folder = resources.files(__package__) / "lilo"
    assets = {t: (folder / f"{t}.jinja").read_text(encoding="utf-8") for t in TEMPLATES}
    checklist = parse_checklist(
        json.loads((folder / CHECKLIST).read_text(encoding="utf-8")), f"lilo/{CHECKLIST}"
    )
    return PromptPack("lilo", assets, checklist, checklist)
