"""lilo's exceptions: one base, two kinds a user acts on, and each one's exit code, which
`lilo` (flows/cli/_main.py) reads from the exception instead of testing type after type.

- `InputError` (exit 2): bad input the user fixes: settings, options, a file.
  `UnknownName` is one: a method, score or other plug-in name no registry holds.
- `Unavailable` (exit 1): something a run needs is not answering: an endpoint, the
  warehouse file held by another process.
- any other `LiloError` (exit 1): a run or lookup that failed.

The first two are "complete": their message says what to do and is printed alone; any
other kind whose message says it all sets `complete` too (a run that failed, flows/_run.py).
The CLI prints any other kind as `Name: message (run again with --debug ...)`. A bad
settings value is pydantic's ValidationError, which the CLI prints as one line, exit 2.

The whole tree ("alone": the message printed alone; "named": with its class name)::

    LiloError                     tasks/errors.py           exit 1, named
    +-- InputError                tasks/errors.py           exit 2, alone
    |   +-- UnknownName           tasks/errors.py
    |   +-- UnknownDataset        flows/_load.py
    |   +-- VersionExists         flows/import_benchmark.py
    |   +-- ConfigError           tasks/config_loading.py
    |   +-- ParameterRefused      tasks/config_loading.py
    |   +-- BenchmarkError        tasks/benchmark/_files.py
    |   +-- CloneError            tasks/probes/clone.py
    |   +-- ProbeDataError        tasks/probes/kinds/base.py
    |   +-- PromptTooLarge        tasks/probes/prompts.py
    |   +-- TemplateTooCostly     tasks/prompt_packs/_bounded.py
    |   +-- ReviewError           tasks/qa/review.py
    |   +-- SweepError            tasks/sweep.py
    |   +-- MissingExtra          tasks/extras.py
    |   +-- NotLilosFolder        tasks/files.py
    |   +-- FileTooLarge          tasks/files.py
    |   |   +-- HardLinked        tasks/files.py
    |   |   +-- LinkOutside       tasks/files.py
    |   +-- NotAWarehouse         warehouse/lock.py
    |   +-- NewerWarehouse        warehouse/schema.py
    |   +-- BadModel              warehouse/schema.py
    +-- Unavailable               tasks/errors.py           exit 1, alone
    |   +-- PreflightError        flows/_preflight.py
    |   +-- WarehouseBusy         warehouse/lock.py
    +-- CLIError                  flows/cli/_errors.py      exit its `code` (2 unless told), alone
    +-- RunFailed                 flows/_run.py             exit 1, alone
    +-- NothingImported           flows/importers/base.py   exit 1, alone
    +-- PluginFailed              tasks/registry.py         exit 1, alone
    +-- NoResults                 warehouse/queries/results.py  (said as a CLIError, exit 1)
    +-- LLMError                  tasks/llm/types.py        exit 1, named
    |   +-- ResponseFormatUnsupported, ContextExceeded, ContextRejected   tasks/llm/types.py
    |   +-- NotStarted            tasks/llm/starting.py
    +-- BadReply                  tasks/llm/openai_backend.py
    |   +-- StreamDied            tasks/llm/openai_backend.py
    +-- ReplyRefused              tasks/bounded_http.py
    +-- DeadlinePassed            tasks/bounded_requests.py
    +-- FetchError, RetryableStatus   tasks/fetch/_http.py
    +-- EmbeddingError            tasks/embeddings.py
    +-- MethodError               tasks/methods/base.py     (recorded on the generation)
    +-- Quarantined               tasks/clean/errors.py     (recorded in `quarantine`)
    +-- QAFormatError             tasks/qa/parse.py

No LiloError is also a built-in exception: a caller catches lilo's class, not ValueError or
RuntimeError. A stop (tasks/lifetime.py, Interrupted: a KeyboardInterrupt) is no LiloError:
a signal exits 128 + the signal, a cost cap (BudgetSpent) exits 3."""

from __future__ import annotations

from typing import ClassVar

__all__ = ["InputError", "LiloError", "Unavailable", "UnknownName", "with_cause"]


class LiloError(Exception):
    exit_code: int = 1
    complete: ClassVar[bool] = False


class InputError(LiloError):
    exit_code = 2
    complete = True


class Unavailable(LiloError):
    complete = True


class UnknownName(InputError):
    """A name no registry (tasks/registry.py) holds; the message lists the known ones."""


def with_cause(exc: BaseException) -> str:
    """`str(exc)`, and its cause's words where it says only that it could not connect (the
    openai client's "Connection error."): a refused certificate or connection says which."""
    text = str(exc)
    cause = exc.__cause__
    if cause is not None and text.rstrip(".").endswith("Connection error") and str(cause):
        return f"{text.rstrip('.')}: {cause}"
    return text
