"""Import a clone of the Lost-in-the-Middle authors' repository (docs/design.md §17): its
probe items and prompt templates stored in one transaction; a second import adds nothing."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

from prefect import flow, task
from prefect.cache_policies import NO_CACHE

from lilo.flows._run import recorded_run
from lilo.flows._stage import stage
from lilo.tasks.config import Settings
from lilo.tasks.probe_records import content_sha256
from lilo.tasks.probes import CLONE_PROMPTS, PROMPTS_DATASET, STAGE, ClonedProbes, read_clone
from lilo.warehouse.queries.probes import probe_item_hashes
from lilo.warehouse.queries.quarantine import quarantined_under

__all__ = ["ProbeImportResult", "import_probes_flow"]


@dataclass
class ProbeImportResult:
    files: dict[str, int]
    items: int
    prompts: list[str]
    absent: list[str]
    problems: list[str]
    rows_added: dict[str, int] = field(default_factory=dict)
    run_id: str = ""
    notes: list[str] = field(default_factory=list)


@task(name="read-lost-in-the-middle", cache_policy=NO_CACHE)
def read_clone_task(path: str, hard_links: bool) -> ClonedProbes:
    return read_clone(Path(path), hard_links)


@flow(name="import-lost-in-the-middle", log_prints=True)
def import_probes_flow(path: str, settings: Settings) -> ProbeImportResult:
    """Store what the clone at `path` holds as probe items, and its prompt templates as
    assets of dataset `lost-in-the-middle`, in one transaction; a second import adds
    nothing. Raises CloneError (nothing recorded) when there is nothing to read."""
    cloned = read_clone_task(path, settings.clone_hard_links)
    with recorded_run(settings, "import-probes") as run:
        with stage(STAGE, settings, run.run_id) as (report, wh):
            stored = probe_item_hashes(wh, [i.item_id for i in cloned.items])
            changed = [i for i in cloned.items if stored.get(i.item_id, i.sha256) != i.sha256]
            if changed:
                report.note(
                    f"{len(changed)} items were imported before with other content and are kept "
                    f"as they were (their answers read that content), e.g. {changed[0].item_id}"
                )
            assets = [
                {
                    "dataset_version": PROMPTS_DATASET,
                    "name": CLONE_PROMPTS[name],
                    "content": text,
                    "source": source,
                    "sha256": content_sha256(text),
                }
                for name, (text, source) in sorted(cloned.prompts.items())
            ]
            with wh.transaction():
                report.write(wh, "dim_probe_items", cloned.items, ("item_id",))
                report.write(wh, "dim_dataset_assets", assets, ("dataset_version", "name"))
                current = {q.item_id for q in cloned.problems}
                stale = [
                    i
                    for i in quarantined_under(wh, STAGE, f"{PROMPTS_DATASET}/")
                    if i not in current
                ]
                wh.clear_quarantine(STAGE, stale)
                report.write(wh, "quarantine", cloned.problems, ("item_id", "stage"), update=True)
        run.add(report)
    return ProbeImportResult(
        files=cloned.files,
        items=len(cloned.items),
        prompts=sorted(source for _, source in cloned.prompts.values()),
        absent=cloned.absent,
        problems=[q.detail for q in cloned.problems],
        rows_added=dict(report.rows_added),
        run_id=run.run_id,
        notes=list(report.notes),
    )
