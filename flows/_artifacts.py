"""Prefect artifacts: what tasks build (`Artifact`, tasks/formatting.py) published on a flow
run. The one module that calls Prefect's artifact API (tests/test_one_way.py).

An artifact goes on the run people open, the top flow run (the pipeline's), not on the
stage's subflow run; `own_run` puts it on the flow run it is made in instead (a stage's QA
quality, a review batch, a run's record). Outside a flow run it belongs to no run.
Markdown and descriptions are made safe to show (`safe_markdown`): no link an artifact
quotes runs a script.

Artifact keys allow lowercase letters, digits and dashes; a keyed artifact keeps its
history across runs, so the same key per dataset or result kind lets the UI compare runs.
A run shows each artifact once: one the same as this run's last of that key (the dataset's
statistics, made by the samples stage and again with the results) is not made again.
"""

from __future__ import annotations

import functools
import hashlib
import json
from uuid import UUID

from prefect.artifacts import (
    MarkdownArtifact,
    TableArtifact,
    create_progress_artifact,
    update_progress_artifact,
)
from prefect.runtime import flow_run
from prefect.settings import PREFECT_UI_URL

from lilo.flows._stage import log
from lilo.tasks.formatting import Artifact, safe_markdown

__all__ = ["progress_artifact", "publish", "ui_url", "update_progress"]


def ui_url() -> str:
    """The Prefect UI's address ("" when none is configured), for links to artifacts."""
    return (PREFECT_UI_URL.value() or "").rstrip("/")


def _top_run() -> str | None:
    """The flow run at the top of this one's tree (itself when it has no parent)."""
    run_id = flow_run.get_id()
    return _root_of(run_id) if run_id else None


@functools.lru_cache(maxsize=8)
def _root_of(run_id: str) -> str:
    """Looked up once per flow run (each level costs API calls)."""
    return flow_run.get_root_flow_run_id()


_LAST: dict[tuple[str, str], str] = {}
"""(flow run, key) -> digest of the last artifact this process made there."""


def _is_new(run_id: str | None, artifact: Artifact) -> bool:
    """Whether the artifact differs from the run's last one of its key (and remember it)."""
    if run_id is None:
        return True
    content = (artifact.markdown, artifact.table, artifact.description)
    digest = hashlib.sha256(json.dumps(content, sort_keys=True, default=str).encode()).hexdigest()
    if _LAST.get((run_id, artifact.key)) == digest:
        return False
    _LAST[(run_id, artifact.key)] = digest
    return True


def publish(*artifacts: Artifact, own_run: bool = False) -> None:
    """Each artifact on the top flow run (`own_run`: on this flow run)."""
    run_id = flow_run.get_id() if own_run else _top_run()
    for artifact in artifacts:
        description = safe_markdown(artifact.description)
        if not _is_new(run_id, artifact):
            continue
        if artifact.table is not None:
            TableArtifact(
                key=artifact.key,
                table=artifact.table,
                description=description,
                flow_run_id=None if run_id is None else UUID(run_id),
            ).create()
        else:
            MarkdownArtifact(
                key=artifact.key,
                markdown=safe_markdown(artifact.markdown or ""),
                description=description,
                flow_run_id=None if run_id is None else UUID(run_id),
            ).create()


def progress_artifact(key: str, description: str) -> UUID | None:
    """A progress artifact at 0% on this flow run; None outside a flow run (a bench, a
    test) or when the API refuses it (progress is shown, not kept)."""
    if flow_run.get_id() is None:
        return None
    try:
        made = create_progress_artifact(0.0, key=key, description=description)
        return made  # type: ignore[return-value]  # called sync: the id, not a coroutine
    except Exception as exc:
        log.debug("no progress artifact: %s", exc)
        return None


def update_progress(artifact: UUID, share: float, description: str) -> None:
    """The progress artifact at `share` percent."""
    update_progress_artifact(artifact, share, description=description)
