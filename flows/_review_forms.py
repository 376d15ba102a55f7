"""What the two review flows (flows/qa_review.py, flows/grade_review.py) share: the form's
prefilled reviewer, where a paused run's form is, and the pause until it is answered."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

from prefect.exceptions import FlowPauseTimeout
from prefect.flow_runs import pause_flow_run
from prefect.input import RunInput
from prefect.settings import get_current_settings
from pydantic import Field

from lilo.tasks.config import Settings

__all__ = ["form_address", "named_reviewer", "now", "wait_for_form"]


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


def wait_for_form(form: type[RunInput], key: str, settings: Settings) -> Any:
    """Pause until the form `key` is answered; None when `qa.review_timeout_s` passed."""
    try:
        return pause_flow_run(
            wait_for_input=form,
            timeout=settings.qa.review_timeout_s,
            poll_interval=settings.qa.review_poll_s,
            key=key,
        )
    except FlowPauseTimeout:
        return None
