"""Artifacts as the Prefect API holds them, filtered on the server by key (and flow run): an
unfiltered read returns one page, and a test session makes more artifacts than a page holds."""

from __future__ import annotations

from typing import Any


def read_artifacts(*keys: str, flow_run: str | None = None) -> list[Any]:
    """The artifacts with these keys (every version of each; only `flow_run`'s when given),
    oldest first."""
    from prefect import get_client
    from prefect.client.schemas.filters import (
        ArtifactFilter,
        ArtifactFilterFlowRunId,
        ArtifactFilterKey,
    )

    run = ArtifactFilterFlowRunId(any_=[flow_run]) if flow_run else None
    with get_client(sync_client=True) as client:
        found = client.read_artifacts(
            artifact_filter=ArtifactFilter(key=ArtifactFilterKey(any_=list(keys)), flow_run_id=run),
            limit=200,
        )
    return sorted(found, key=lambda a: a.created)


def latest_artifacts(*keys: str, flow_run: str | None = None) -> dict[str, Any]:
    """The newest artifact of each key (of `flow_run` when given)."""
    return {a.key: a for a in read_artifacts(*keys, flow_run=flow_run)}
