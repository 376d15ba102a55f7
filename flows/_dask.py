"""Units on Dask (`runner.kind = "dask"`): batches of a stage's units as Prefect tasks on a
DaskTaskRunner, a LocalCluster or an existing scheduler (docs/design.md §12).

A batch task is pure: its inputs in, its records and the LLM calls it made out (a worker on
another machine cannot append to the flow's call log). The flow process alone writes: as
each batch completes it appends the batch's calls to the stage's call log and hands its
records to the same `on_done` the thread path uses, on the flow's thread."""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from typing import TYPE_CHECKING, Any, NamedTuple, TypeVar

from lilo.tasks.config import Settings
from lilo.tasks.extras import require_extra
from lilo.tasks.llm.ledger import CallLog
from lilo.tasks.records import LLMCall

if TYPE_CHECKING:
    from prefect import Task
    from prefect_dask import DaskTaskRunner

__all__ = ["Batch", "dask_runner", "run_batches"]

T = TypeVar("T")
R = TypeVar("R")


class Batch(NamedTuple):
    """What a batch task returns: one result per unit, in the batch's order, the LLM calls
    it made, and whatever else the stage counts (embeddings made and cached)."""

    results: list[Any]
    calls: list[LLMCall]
    extra: Any = None


@contextmanager
def dask_runner(settings: Settings) -> Iterator[DaskTaskRunner]:
    """A started DaskTaskRunner on `runner.dask_address`, or on a LocalCluster of
    `runner.dask_workers` processes that is closed when the block ends."""
    require_extra("prefect_dask", "dask", 'runner.kind = "dask"')
    from prefect_dask import DaskTaskRunner

    cfg = settings.runner
    if cfg.dask_address:
        runner = DaskTaskRunner(address=cfg.dask_address)
    else:
        runner = DaskTaskRunner(
            cluster_kwargs={
                "n_workers": cfg.dask_workers,
                "processes": True,
                "threads_per_worker": cfg.dask_threads_per_worker,
                "dashboard_address": None,
            }
        )
    with runner:
        yield runner


@contextmanager
def _api_for_workers() -> Iterator[None]:
    """Submissions that carry the flow's Prefect API to the workers. A flow run without
    PREFECT_API_URL (`lilo run` or `lilo demo` from a terminal) talks to the temporary server
    Prefect started for it; without its address each worker would start one of its own."""
    from prefect.client.orchestration import get_client
    from prefect.settings import PREFECT_API_URL, temporary_settings

    if PREFECT_API_URL.value():
        yield
        return
    api = str(get_client(sync_client=True).api_url)
    with temporary_settings(updates={PREFECT_API_URL: api}):
        yield


def run_batches(
    task: Task[..., Batch],
    work: Sequence[T],
    settings: Settings,
    log: CallLog,
    on_done: Callable[[list[tuple[T, R]]], None],
    **params: Any,
) -> list[Any]:
    """`task(work=batch, settings=settings, **params)` for each batch of
    `runner.batch_units` units on Dask; as each one completes, its calls go into `log` and
    its (unit, result) pairs to `on_done`. Returns each batch's `extra`. A batch that
    raised raises here once the others are in (their results written), as the thread
    path's fan-out does."""
    from prefect.futures import as_completed

    # A worker started in another folder (or on another machine, with the data folder
    # mounted at the same path) finds the caches by absolute path.
    remote = settings.with_overrides({"data_dir": str(settings.data_dir.resolve())})
    size = settings.runner.batch_units
    batches = [list(work[i : i + size]) for i in range(0, len(work), size)]
    extras: list[Any] = []
    errors: list[BaseException] = []
    with dask_runner(settings) as runner, _api_for_workers():
        futures = {
            runner.submit(task, {"work": b, "settings": remote, **params}): b for b in batches
        }
        for future in as_completed(list(futures)):
            try:
                batch: Batch = future.result()
            except Exception as exc:  # the other batches still land
                errors.append(exc)
                continue
            for call in batch.calls:
                log.append(call)
            on_done(list(zip(futures[future], batch.results, strict=True)))
            extras.append(batch.extra)
    if errors:
        raise errors[0]
    return extras
