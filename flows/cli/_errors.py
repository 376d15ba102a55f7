"""Mistakes a user can fix, as one line."""

from __future__ import annotations

from lilo.tasks.errors import LiloError

__all__ = ["CLIError"]


class CLIError(LiloError):
    """A mistake the user can fix, or a lookup that found nothing: printed as one
    `lilo: ...` line, exit `code`."""

    complete = True

    def __init__(self, message: str, code: int = 2) -> None:
        super().__init__(message)
        self.exit_code = code
