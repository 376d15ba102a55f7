"""What the two review flows (flows/qa_review.py, flows/grade_review.py) share: the form's
prefilled reviewer, where a paused run's form is, the note on the paused run that says so,
and the pause until it is answered."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

from prefect.exceptions import FlowPauseTimeout
from prefect.flow_runs import pause_flow_run
from prefect.input import RunInput
from prefect.settings import get_current_settings
from pydantic import Field

from lilo.flows._artifacts import publish
from lilo.flows._stage import log
from lilo.tasks.config import QASettings
from lilo.tasks.formatting import Artifact

__all__ = ["announce_form", "form_address", "named_reviewer", "now", "wait_for_form"]


def named_reviewer(form: type[RunInput], reviewer: str | None) -> dict[str, Any]:
    """The form's `reviewer` field with `reviewer` as its value, when given."""
    if not reviewer:
        return {}
    field = form.model_fields["reviewer"]
    return {"reviewer": (str, Field(default=reviewer, title=field.title, min_length=1,
                                    description=field.description))}  # fmt: skip


def now() -> datetime:
    """The warehouse's time: naive UTC."""
    return datetime.now(UTC).replace(tzinfo=None)


def form_address(run_id: str) -> str:
    """Where a paused run's form is: PREFECT_UI_URL, else the API's host (its UI)."""
    current = get_current_settings()
    base = current.ui_url or str(current.api.url or "").rstrip("/").removesuffix("/api")
    return f"{base.rstrip('/')}/runs/flow-run/{run_id}"


def announce_form(flow: str, key: str, what: str, run_id: str, cli: str, timeout_s: int) -> None:
    """A Markdown artifact on the paused run (its page's Artifacts tab) and a log line: a
    review waits, for `what`; where its form is (the run's Resume button) and `cli`, the
    command that reviews without the UI."""
    address = form_address(run_id)
    hours = f" ({timeout_s / 3600:.3g} h)" if timeout_s >= 3600 else ""
    log.info(
        "%s: a review waits: form %s (%s); open %s and click Resume to fill it in, or run "
        "`%s`; unanswered, it times out in %s s",
        flow, key, what, address, cli, timeout_s,
    )  # fmt: skip
    publish(
        Artifact(
            f"{flow}-waiting",
            f"A review waits: form {key} ({what})",
            markdown=(
                f"# A review waits: form {key}\n\n{what}.\n\n"
                f"- **In the Prefect UI**: on this flow run's page ({address}), click "
                "**Resume** (top right): the form opens; submit it to record the decisions.\n"
                f"- **On the command line**, without the UI: `{cli}`.\n\n"
                f"Unanswered, the form times out in {timeout_s} s{hours}; what it holds then "
                "stays as it was."
            ),
        ),
        own_run=True,
    )


def wait_for_form(form: type[RunInput], key: str, qa: QASettings) -> Any:
    """Pause until the form `key` is answered; None when `qa.review_timeout_s` passed."""
    try:
        return pause_flow_run(
            wait_for_input=form,
            timeout=qa.review_timeout_s,
            poll_interval=qa.review_poll_s,
            key=key,
        )
    except FlowPauseTimeout:
        return None
