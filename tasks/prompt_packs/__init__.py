"""Prompt templates and checklists, as data of a dataset version (docs/design.md §14)."""

from lilo.tasks.prompt_packs._bounded import TemplateTooCostly
from lilo.tasks.prompt_packs.pack import (
    ASSET_NAMES,
    METHOD_TEMPLATES,
    SCRIPT_STRINGS,
    TEMPLATES,
    ChecklistItem,
    PromptPack,
    key_requirements,
    lilo_pack,
    parse_checklist,
    prompt_template,
    reference_template,
    template_problem,
)

__all__ = [
    "ASSET_NAMES",
    "METHOD_TEMPLATES",
    "SCRIPT_STRINGS",
    "TEMPLATES",
    "ChecklistItem",
    "TemplateTooCostly",
    "PromptPack",
    "key_requirements",
    "lilo_pack",
    "parse_checklist",
    "prompt_template",
    "reference_template",
    "template_problem",
]
