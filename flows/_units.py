"""A stage's units, one way (`run_units`): on threads in the flow's process
(`runner.kind = "threads"`), or in batches as Prefect tasks on a DaskTaskRunner, a
LocalCluster or an existing scheduler (`runner.kind = "dask"`, docs/design.md §12).

Either way the stage's `fan(work, settings, llm, on_done, **params)` runs its units on one
client (`make_client` or `make_judge_client`) and hands the finished (unit, result) pairs
to `on_done`. On threads, `on_done` is the flow's and each call goes into the stage's call
log as it returns. A batch on Dask is pure: its inputs in, its results (in the batch's
order) and the LLM calls it made out, since a worker on another machine cannot append to
the flow's call log; the flow process alone writes: as each batch completes it appends the
batch's calls to the call log and hands its pairs to the same `on_done`, on the flow's
thread."""

from __future__ import annotations

import logging
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from typing import TYPE_CHECKING, Any, NamedTuple, TypeVar

from prefect import task
from prefect.cache_policies import NO_CACHE
from prefect.utilities.annotations import quote

from lilo.flows import _shared_limits
from lilo.tasks.config import RunnerSettings, Settings
from lilo.tasks.extras import require_extra
from lilo.tasks.lifetime import raise_if_stopping
from lilo.tasks.llm import LLMClient
from lilo.tasks.llm.batch import BATCH_FAILED, BATCH_LANDED, Collector, batch_price, run_batch
from lilo.tasks.llm.ledger import CallLog
from lilo.tasks.records import LLMCall
from lilo.tasks.redact import configured_secrets

# The LLM clients made in this process take the endpoint-wide limits (flows/_shared_limits.py).
_shared_limits.install()

if TYPE_CHECKING:
    from prefect import Task
    from prefect.futures import PrefectFuture
    from prefect_dask import DaskTaskRunner

__all__ = ["batch_rounds", "check_runner", "elsewhere", "run_units"]

log_ = logging.getLogger(__name__)

T = TypeVar("T")
R = TypeVar("R")

Fan = Callable[..., Any]
"""`fan(work, settings, llm, on_done, **params)`: the stage's units on `llm`, each finished
(unit, result) pair to `on_done`; returns what the stage counts besides (or None). A
module-level function: Dask workers import it."""
Client = Callable[..., LLMClient]
"""`make_client` or `make_judge_client`: `client(settings, log=None)`."""


def elsewhere(runner: RunnerSettings) -> bool:
    """Whether the units run in processes other than the flow's (on Dask)."""
    return runner.kind == "dask"


def check_runner(runner: RunnerSettings) -> None:
    """The runner the settings name can run here: Dask needs the `dask` extra (MissingExtra
    names it), checked before a run starts."""
    if runner.kind == "dask":
        require_extra("prefect_dask", "dask", 'runner.kind = "dask"')


def run_units(
    name: str,
    fan: Fan,
    client: Client,
    work: Sequence[T],
    settings: Settings,
    log: CallLog,
    on_done: Callable[[list[tuple[T, R]]], None],
    *,
    batchable: Callable[[T], bool] | None = None,
    **params: Any,
) -> list[Any]:
    """Every unit of `work` through `fan`, as the task `name` (threads) or `name-batch`
    tasks (Dask); returns what each task's `fan` returned. With `batchable` and the
    client's endpoint set to batch (`llm.batch`, `judge.batch`), the requests of the units
    it picks go through OpenAI's Batch API first (`batch_rounds`)."""
    if not work:
        return []
    if batchable is not None:
        batch_rounds(fan, client, [w for w in work if batchable(w)], settings, log, params)
    if settings.runner.kind == "dask":
        batch = _batch.with_options(name=f"{name}-batch")
        return _run_batches(
            batch, work, settings, log, on_done, fan=fan, client=client, params=params
        )
    units = _units.with_options(name=name)
    return [units(fan, client, quote(work), settings, log, on_done, params)]


# Rounds of batches a stage sends at most: its calls that feed on another's reply (a QA
# answer's grade) go in the round after it.
_ROUNDS = 3


def batch_rounds(
    fan: Fan,
    client: Client,
    work: Sequence[Any],
    settings: Settings,
    log: CallLog,
    params: dict[str, Any],
) -> None:
    """The replies the units of `work` ask for, made through OpenAI's Batch API into the
    cache (tasks/llm/batch.py), where the stage's own pass finds them: each round runs the
    units on a collecting client in the flow's process (nothing written, no call made) and
    sends what it collected as one batch; a request a batch did not answer fails in the
    stage's pass, and the next run asks it again. Nothing where the endpoint does not batch."""
    BATCH_FAILED.clear()
    BATCH_LANDED.clear()
    llm = client(settings)
    cfg = llm.settings.llm
    if not cfg.batch or not work or llm.backend.name != "openai":
        return
    llm.collector = Collector()
    model = llm.backend.model
    price = batch_price(cfg.prices.get(model), cfg.batch_prices.get(model))
    for _ in range(_ROUNDS):
        for item in work:
            raise_if_stopping()
            try:
                fan([item], settings, llm, lambda done: None, **params)
            except Exception:  # a unit fed placeholders may fail: its own pass will say
                log_.debug("a collecting round's unit failed", exc_info=True)
        requests = llm.collector.take()
        if not requests:
            return
        run_batch(
            llm.backend.batch_client(),  # type: ignore[attr-defined]
            llm.cache,
            requests,
            backend=llm.backend.name,
            model=model,
            price=price,
            poll_s=cfg.batch_poll_s,
            log=log,
            secrets=configured_secrets(settings),
        )


@task(cache_policy=NO_CACHE)
def _units(
    fan: Fan,
    client: Client,
    work: Sequence[Any],
    settings: Settings,
    log: CallLog,
    on_done: Callable[[list[tuple[Any, Any]]], None],
    params: dict[str, Any],
) -> Any:
    """All the units in the flow's process, each call appended to the call log as it
    returns."""
    llm = client(settings, log)
    extra = fan(work, settings, llm, on_done, **params)
    llm.take_calls()
    return extra


class Batch(NamedTuple):
    """What a batch task returns: one result per unit, in the batch's order, the LLM calls
    it made, and whatever else the stage counts (embeddings made and cached)."""

    results: list[Any]
    calls: list[LLMCall]
    extra: Any = None


@task(cache_policy=NO_CACHE)
def _batch(
    work: list[Any], settings: Settings, fan: Fan, client: Client, params: dict[str, Any]
) -> Batch:
    """A batch of units on a Dask worker: no call log here, the calls travel with the
    results, which come back in the batch's order (`fan` hands them over as they finish)."""
    llm = client(settings)
    done: dict[int, Any] = {}
    position = {id(item): n for n, item in enumerate(work)}

    def keep(finished: list[tuple[Any, Any]]) -> None:
        done.update((position[id(item)], result) for item, result in finished)

    extra = fan(work, settings, llm, keep, **params)
    return Batch([done[n] for n in range(len(work))], llm.take_calls(), extra)


@contextmanager
def _dask_runner(settings: Settings) -> Iterator[DaskTaskRunner]:
    """A started DaskTaskRunner on `runner.dask_address`, or on a LocalCluster of
    `runner.dask_workers` processes that is closed when the block ends."""
    check_runner(settings.runner)
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


def _run_batches(
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
    with _dask_runner(settings) as runner, _api_for_workers():
        futures: dict[PrefectFuture[Batch], list[T]] = {
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
