"""Artifacts as the Prefect API holds them, filtered on the server by key: an unfiltered read
returns one page, and a test session makes more artifacts than a page holds."""

from __future__ import annotations

from typing import Any


def read_artifacts(*keys: str) -> list[Any]:
    """The artifacts with these keys (every version of each), oldest first."""
    from prefect import get_client
    from prefect.client.schemas.filters import ArtifactFilter, ArtifactFilterKey

    with get_client(sync_client=True) as client:
        found = client.read_artifacts(
            artifact_filter=ArtifactFilter(key=ArtifactFilterKey(any_=list(keys))), limit=200
        )
    return sorted(found, key=lambda a: a.created)


def latest_artifacts(*keys: str) -> dict[str, Any]:
    """The newest artifact of each key."""
    return {a.key: a for a in read_artifacts(*keys)}
