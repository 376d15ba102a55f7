"""lilo's exceptions: one base, two kinds a user acts on, and each one's exit code, which
`lilo` (flows/cli/_main.py) reads from the exception instead of testing type after type.

- `InputError` (exit 2): bad input the user fixes: settings, options, a file.
  `UnknownName` is one: a method, score or other plug-in name no registry holds.
- `Unavailable` (exit 1): something a run needs is not answering: an endpoint, the
  warehouse file held by another process.
- any other `LiloError` (exit 1): a run or lookup that failed.

The first two are "complete": their message says what to do and is printed alone; any
other kind whose message says it all sets `complete` too (a run that failed, flows/_run.py)."""

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
