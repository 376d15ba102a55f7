"""Warehouse rows back into the records tasks take (the queries are warehouse/queries/):
the samples a run works on, and the dataset's prompt pack; and the check that a run's
dataset version exists."""

from __future__ import annotations

import re
from dataclasses import replace

from lilo.tasks.config import GenerateSettings, Settings
from lilo.tasks.errors import InputError
from lilo.tasks.prompt_packs import PromptPack, lilo_pack
from lilo.tasks.qa import is_ready, waiting_for_review
from lilo.tasks.records import QAPair, Sample
from lilo.warehouse import Warehouse
from lilo.warehouse.queries._read import Source
from lilo.warehouse.queries.datasets import dataset_assets, dataset_versions, load_qa, load_samples
from lilo.warehouse.queries.generations import load_generations
from lilo.warehouse.queries.papers import load_papers

__all__ = [
    "UnknownDataset",
    "check_dataset_version",
    "first_samples",
    "in_reading_order",
    "load_generations",
    "load_pack",
    "load_papers",
    "load_qa",
    "load_samples",
    "ready_samples",
    "waiting_samples",
]


def _natural(sample_id: str) -> list[object]:
    """group_2 before group_10."""
    return [int(t) if t.isdigit() else t for t in re.split(r"(\d+)", sample_id)]


def ready_samples(
    wh: Warehouse, settings: Settings
) -> tuple[list[Sample], dict[str, list[QAPair]]]:
    """The samples generation and scoring work on: complete and ready (docs/design.md §2), their
    papers in the order they are read (`in_reading_order`), in natural id order, the first
    `generate.samples` of them when that is set; and the version's QA pairs."""
    qa = load_qa(wh, settings.dataset_version)
    samples = load_samples(wh, settings.dataset_version, complete=True)
    ready = [
        in_reading_order(s, settings.generate)
        for s in samples
        if is_ready(qa.get(s.sample_id, []), settings.qa)
    ]
    return first_samples(ready, settings.generate), qa


def in_reading_order(sample: Sample, generate: GenerateSettings) -> Sample:
    """The sample with its papers in the order `generate.paper_order` reads them: `listing`
    puts them in the order recorded at import, where one was (docs/reference.md)."""
    listing = sample.listing_order
    if generate.paper_order != "listing" or not listing:
        return sample
    if sorted(listing) != sorted(sample.paper_ids):
        return sample
    return replace(sample, paper_ids=tuple(listing))


def first_samples(samples: list[Sample], generate: GenerateSettings) -> list[Sample]:
    """`samples` in natural id order, the first `generate.samples` of them when that is set:
    the QA stage works on these too, so a quick look pays for no other sample's QA."""
    ordered = sorted(samples, key=lambda s: _natural(s.sample_id))
    limit = generate.samples
    return ordered[:limit] if limit else ordered


def waiting_samples(
    wh: Warehouse, settings: Settings, qa: dict[str, list[QAPair]]
) -> dict[str, str]:
    """Complete samples a reviewer holds up (sample id -> "waiting for review: ..."): a run
    expects them in its results, where they are missing. With `generate.samples` set (the
    first N ready samples) none is expected."""
    if settings.generate.samples:
        return {}
    waiting = {
        s.sample_id: waiting_for_review(qa.get(s.sample_id, []), settings.qa)
        for s in load_samples(wh, settings.dataset_version, complete=True)
    }
    return {sample: why for sample, why in waiting.items() if why}


def load_pack(wh: Warehouse, dataset_version: str) -> PromptPack:
    """The prompt pack the dataset version carries; lilo's own when it carries none."""
    assets = dataset_assets(wh, dataset_version)
    return PromptPack.from_assets(dataset_version, assets) if assets else lilo_pack()


class UnknownDataset(InputError):
    """A dataset version the warehouse does not hold; the message lists the known ones."""


def check_dataset_version(source: Source, settings: Settings) -> None:
    """UnknownDataset, naming the known versions, when `settings.dataset_version` is not one."""
    known = dataset_versions(source)
    if settings.dataset_version not in known:
        raise UnknownDataset(
            f"no dataset version {settings.dataset_version!r} in {settings.db_path}: "
            f"known are {', '.join(known) or 'none'}; import one with "
            "`lilo import longinoutbench PATH` or build one with `lilo run --survey ID` "
            "(or `lilo demo`)"
        )
