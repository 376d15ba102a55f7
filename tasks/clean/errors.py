"""The one way the cleaner says "this paper goes to quarantine" (docs/design.md §3-4)."""

from __future__ import annotations

from lilo.tasks.errors import LiloError

__all__ = ["Quarantined"]


class Quarantined(LiloError):
    """Raised for a paper that must not go further; `clean_paper` turns it into a Quarantine.

    `reason` is a short stable code (`unsafe_archive`, `no_latex_source`, `not_utf8`, ...) that
    analysts group by; `detail` says which file or member and why.
    """

    def __init__(self, reason: str, detail: str = "") -> None:
        super().__init__(f"{reason}: {detail}" if detail else reason)
        self.reason = reason
        self.detail = detail
