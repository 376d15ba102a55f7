"""Lost in the Middle's probes (Liu et al., TACL 2024): key-value retrieval and
multi-document QA with the gold item at a chosen position (docs/design.md §17;
docs/reference.md), each task one module of tasks/probes/kinds/. Pure: the data (read from
the user's clone or made by lilo), the prompts, the gold placement, one unit's answer and
the metric."""

from lilo.tasks.probes.ask import MAX_NEW_TOKENS, ask, build_prompt, units_for
from lilo.tasks.probes.build import passages, variant_of
from lilo.tasks.probes.clone import STAGE, ClonedProbes, CloneError, locate_clone, read_clone
from lilo.tasks.probes.kinds import (
    Flag,
    ProbeDataError,
    ProbeInputs,
    ProbeTask,
    available_probe_tasks,
    default_positions,
    get_probe_task,
    probe_task,
)
from lilo.tasks.probes.kinds.kv import kv_items
from lilo.tasks.probes.kinds.mdqa import mdqa_from_oracle, mdqa_from_warehouse
from lilo.tasks.probes.metric import (
    ECHO_TOKENS,
    echoes_prompt,
    kv_correct,
    normalize_answer,
    qa_correct,
)
from lilo.tasks.probes.placement import place_gold, place_kv
from lilo.tasks.probes.prompts import (
    CLONE_PROMPTS,
    LILO_PROMPTS,
    PROMPTS_DATASET,
    ProbePrompts,
    format_documents,
    format_kv_records,
)

__all__ = [
    "probe_task",
    "get_probe_task",
    "available_probe_tasks",
    "ProbeTask",
    "ProbeInputs",
    "ProbeDataError",
    "Flag",
    "CLONE_PROMPTS",
    "ECHO_TOKENS",
    "LILO_PROMPTS",
    "MAX_NEW_TOKENS",
    "PROMPTS_DATASET",
    "STAGE",
    "ClonedProbes",
    "CloneError",
    "ProbePrompts",
    "ask",
    "build_prompt",
    "default_positions",
    "echoes_prompt",
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
