"""A fetch killed midway keeps the e-prints it wrote, and the rerun asks the loopback mirror
only for the rest; an id that fails and later arrives loses its quarantine row."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path

import pytest

from lilo.flows.fetch import fetch_flow
from lilo.tasks.config import Settings
from lilo.tasks.synthetic import Mirror, write_corpus
from lilo.tasks.synthetic.corpus import SURVEY_ID
from lilo.warehouse import Warehouse

_RUN = """
import json, sys
from lilo.flows.fetch import fetch_flow
from lilo.tasks.config import Settings
fetch_flow(Settings().with_overrides(json.loads(sys.argv[1])), "killed")
"""


def _eprints(mirror: Mirror, since: int = 0) -> list[str]:
    """Ids of the e-prints requested after the first `since` requests."""
    prefix = "/e-print/"
    return [p[len(prefix) :] for p, _, _ in mirror.requests_log[since:] if p.startswith(prefix)]


def _stored(settings: Settings) -> set[str]:
    with Warehouse(settings.db_path) as wh:
        return {r["arxiv_id"] for r in wh.rows("SELECT arxiv_id FROM stg_raw_sources")}


def _kill_after(proc: subprocess.Popen[bytes], mirror: Mirror, n_eprints: int) -> None:
    deadline = time.monotonic() + 180
    while len(_eprints(mirror)) < n_eprints:
        assert proc.poll() is None, proc.communicate()
        assert time.monotonic() < deadline, "the fetch did not get going"
        time.sleep(0.02)
    proc.kill()
    proc.wait()


@pytest.mark.slow  # a fetch in a subprocess, killed and resumed
def test_killed_fetch_resumes_where_it_stopped(tmp_path: Path, prefect_harness) -> None:
    from prefect.settings import get_current_settings

    manifest = write_corpus(tmp_path / "corpus")
    papers = sorted(i.arxiv_id for i in manifest.items if i.role == "paper")
    with Mirror(tmp_path / "corpus") as mirror:
        overrides = {
            "data_dir": str(tmp_path / "data"),
            "surveys": [SURVEY_ID],
            "arxiv.api_url": mirror.api_url,
            "arxiv.eprint_url": mirror.eprint_url,
            "arxiv.delay_s": 0.2,
            "arxiv.page_size": 2,
        }
        env = {"PREFECT_API_URL": str(get_current_settings().api.url)}
        proc = subprocess.Popen(
            [sys.executable, "-c", _RUN, json.dumps(overrides)],
            env={**os.environ, **env},
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
        )
        # The survey, then two chunks of two papers: killed while the third chunk downloads.
        _kill_after(proc, mirror, n_eprints=1 + 2 + 2 + 1)
        settings = Settings().with_overrides({**overrides, "arxiv.delay_s": 0.0})
        kept = _stored(settings) - {SURVEY_ID}
        assert len(kept) in (4, 5) and kept < set(papers)

        before = len(mirror.requests_log)
        last = papers[-1]
        mirror.inject(f"/e-print/{last}", [404])
        fetch_flow(settings, "resumed")
        asked = _eprints(mirror, before)
        assert sorted(asked) == sorted(set(papers) - kept) and not set(asked) & kept
        assert _stored(settings) == {SURVEY_ID, *papers} - {last}
        with Warehouse(settings.db_path) as wh:
            assert wh.scalar("SELECT reason FROM quarantine WHERE item_id = ?", [last]) == (
                "fetch_failed"
            )

        before = len(mirror.requests_log)
        fetch_flow(settings, "third")
        assert _eprints(mirror, before) == [last]
    assert _stored(settings) == {SURVEY_ID, *papers}
    with Warehouse(settings.db_path) as wh:
        assert wh.count("quarantine") == 0
