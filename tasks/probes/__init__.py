"""Lost in the Middle's probes (Liu et al., TACL 2024): key-value retrieval and
multi-document QA with the gold item at a chosen position (docs/design.md §17;
docs/reference.md). Pure: the data (read from the user's clone or made by lilo), the
prompts, the gold placement, one unit's answer and the metric."""

from lilo.tasks.probes.ask import MAX_NEW_TOKENS, ask, build_prompt, units_for
from lilo.tasks.probes.build import (
    kv_items,
    mdqa_from_oracle,
    mdqa_from_warehouse,
    passages,
    variant_of,
)
from lilo.tasks.probes.clone import STAGE, ClonedProbes, CloneError, locate_clone, read_clone
from lilo.tasks.probes.metric import kv_correct, normalize_answer, qa_correct
from lilo.tasks.probes.placement import PAPER_POSITIONS, default_positions, place_gold, place_kv
from lilo.tasks.probes.prompts import (
    CLONE_PROMPTS,
    LILO_PROMPTS,
    PROMPTS_DATASET,
    ProbePrompts,
    format_documents,
    format_kv_records,
)
from lilo.tasks.probes.records import ProbeAnswer, ProbeItem, ProbeUnit

__all__ = [
    "CLONE_PROMPTS",
    "LILO_PROMPTS",
    "MAX_NEW_TOKENS",
    "PAPER_POSITIONS",
    "PROMPTS_DATASET",
    "STAGE",
    "ClonedProbes",
    "CloneError",
    "ProbeAnswer",
    "ProbeItem",
    "ProbePrompts",
    "ProbeUnit",
    "ask",
    "build_prompt",
    "default_positions",
    "format_documents",
    "format_kv_records",
    "kv_correct",
    "kv_items",
    "locate_clone",
    "mdqa_from_oracle",
    "mdqa_from_warehouse",
    "normalize_answer",
    "passages",
    "place_gold",
    "place_kv",
    "qa_correct",
    "read_clone",
    "units_for",
    "variant_of",
]
