"""What the review commands that start a form-waiting flow share (`lilo review ui`,
`lilo review grades-ui`): a Prefect API for the forms to live in, and where they wait."""

from __future__ import annotations

from typing import Any

from lilo.flows.cli._errors import CLIError

__all__ = ["print_address", "print_wait", "require_api"]


def require_api() -> None:
    """A CLIError unless a Prefect API is configured: a review form needs a UI to live in."""
    from prefect.settings import get_current_settings

    if not get_current_settings().api.url:
        raise CLIError(
            "no Prefect API is configured: the form would live on a temporary server no "
            "browser can reach; run `prefect server start`, then "
            "`prefect config set PREFECT_API_URL=http://127.0.0.1:4200/api`, and try again"
        )


def print_address(flow: Any, flow_run: Any, state: Any) -> None:
    """A review flow's on-running hook: where its forms wait."""
    from lilo.flows._review_forms import form_address

    print(
        "review in the Prefect UI; the run waits for its forms at "
        f"{form_address(str(flow_run.id))}",
        flush=True,
    )


def print_wait(command: str, timeout_s: int) -> None:
    """What a review command holds the terminal for, said before it does: each form's wait
    and how to stop it."""
    hours = f" ({timeout_s / 3600:.3g} h)" if timeout_s >= 3600 else ""
    print(
        f"{command}: holds this terminal while its forms wait, up to {timeout_s} s{hours} for "
        "each (qa.review_timeout_s); Ctrl-C stops it, keeping every form already submitted",
        flush=True,
    )
