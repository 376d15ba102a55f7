"""Key-value retrieval (Liu et al., TACL 2024, §3): a JSON object of k random UUID pairs,
the value of one key asked for, the asked pair at a chosen position. Its data: the
authors' published files, or sets lilo makes as the authors' script does (k pairs of
UUID4 strings, one asked for) from a seeded generator: the same seed gives the same sets."""

from __future__ import annotations

import random
import uuid
from collections.abc import Sequence
from typing import Any

from lilo.tasks.config import ProbeSettings
from lilo.tasks.probe_records import ProbeItem, ProbeUnit, nonempty_text
from lilo.tasks.probes.kinds.base import Embed, Flag, ProbeInputs, ProbeTask, probe_task
from lilo.tasks.probes.metric import kv_correct
from lilo.tasks.probes.placement import place_kv
from lilo.tasks.probes.prompts import ProbePrompts

__all__ = ["KV", "clone_item", "kv_items"]

NAME = "kv"


def kv_items(size: int, examples: int, seed: int) -> list[ProbeItem]:
    """`examples` sets of `size` pairs, each key and value a UUID4 string, one pair chosen
    as the one asked for, all drawn from one generator seeded by (size, seed)."""
    if size < 2:
        raise ValueError(f"a key-value set needs at least 2 keys, not {size}")
    rng = random.Random(f"lilo-kv:{size}:{seed}")

    def uuid4() -> str:
        return str(uuid.UUID(int=rng.getrandbits(128), version=4))

    probe_set = f"lilo/{NAME}-{size}[seed={seed}]"
    items = []
    for n in range(examples):
        records: dict[str, str] = {}
        while len(records) != size:
            records[uuid4()] = uuid4()
        pairs = tuple(records.items())
        key, value = pairs[rng.randrange(size)]
        items.append(
            ProbeItem(f"{probe_set}/{n}", probe_set, NAME, size, n, "lilo", key, (value,), pairs)
        )
    return items


def clone_item(row: dict[str, Any], n: int, relative: str, size: int) -> ProbeItem:
    """Line `n` of the authors' `kv-retrieval-{size}_keys.jsonl.gz`; ValueError naming
    what is wrong with it."""
    records = row["ordered_kv_records"]
    key, value = nonempty_text(row["key"], "key"), nonempty_text(row["value"], "value")
    pairs = tuple(
        (nonempty_text(k, "a record's key"), nonempty_text(v, "a record's value"))
        for k, v in records
    )
    if len(pairs) != size:
        raise ValueError(f"{len(pairs)} records where the file name says {size}")
    if len({k for k, _ in pairs}) != len(pairs):
        raise ValueError("duplicate keys")
    if (key, value) not in pairs:
        raise ValueError(f"the pair of key {key} is not among the records")
    return ProbeItem(
        f"liu/{NAME}-{size}/{n}",
        f"liu/{NAME}-{size}",
        NAME,
        size,
        n,
        relative,
        key,
        (value,),
        pairs,
    )


def _make(
    wanted: Sequence[int], cfg: ProbeSettings, inputs: ProbeInputs, embed: Embed
) -> tuple[list[ProbeItem], list[str]]:
    return [i for size in wanted for i in kv_items(size, cfg.examples, cfg.seed)], []


def _prompt(unit: ProbeUnit, prompts: ProbePrompts) -> str:
    item = unit.item
    records = place_kv(item.context, item.question, unit.position or 0)
    return prompts.kv(records, item.question, unit.query_aware)


KV = probe_task(
    ProbeTask(
        NAME,
        title="key-value retrieval",
        unit="keys",
        sizes=Flag("kv_keys", "--keys", "keys per JSON object, e.g. 75,140,300"),
        sources=("auto", "published", "lilo"),
        source_help="else lilo-made sets",
        make=_make,
        prompt=_prompt,
        grade=lambda prediction, item: kv_correct(prediction, item.answers[0]),
        stop=('"',),  # the value's closing quote
        # The authors ran 140 keys; lilo's defaults for 75 and 300 follow the same spacing.
        paper_positions={
            75: (0, 24, 49, 74),
            140: (0, 34, 69, 104, 139),
            300: (0, 49, 99, 149, 199, 249, 299),
        },
    ),
    __name__,
)
