"""Title search: every search recorded on its reference, a failed one retried on a later run
with backoff, an answer kept; and the fetch flow re-reading a survey whose retry is due,
storing each reference's section and citation group (loopback arXiv mirror)."""

from __future__ import annotations

import gzip
import io
import re
import tarfile
from dataclasses import replace
from datetime import datetime, timedelta
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest

from lilo.flows.fetch import fetch_flow
from lilo.tasks.config import Settings
from lilo.tasks.samples import title_search
from lilo.tasks.samples.references import Reference
from lilo.tasks.samples.title_search import resolve_titles, retry_due
from lilo.tasks.synthetic import Mirror, write_corpus
from lilo.tasks.synthetic.corpus import SURVEY_ID
from lilo.warehouse import Warehouse

T0 = datetime(2026, 1, 1, 2, 0)
SETTINGS = Settings().with_overrides({"arxiv.api_url": "http://127.0.0.1:9/api/query"})
REFS = [
    Reference("known", "Attention Is All You Need", "1706.03762", "eprint"),
    Reference(
        "t1", "Lost in the Middle: How Language Models Use Long Contexts", None, "unresolved"
    ),
    Reference("t2", "Deep Residual Learning for Image Recognition", None, "unresolved"),
]


class FakeArxiv:
    """`search` stand-in: fails while `down`, else answers from `titles`."""

    def __init__(self) -> None:
        self.down = True
        self.calls: list[str] = []
        self.titles = {"middle": ("2307.03172", REFS[1].title)}

    def __call__(self, query: str, max_results: int, settings: Settings) -> list[Any]:
        self.calls.append(query)
        if self.down:
            raise ConnectionError("arXiv unreachable")
        return [
            SimpleNamespace(arxiv_id=arxiv_id, title=title)
            for word, (arxiv_id, title) in self.titles.items()
            if word in query
        ]


@pytest.fixture
def arxiv(monkeypatch: pytest.MonkeyPatch) -> FakeArxiv:
    fake = FakeArxiv()
    monkeypatch.setattr(title_search, "search", fake)
    return fake


def _by_key(refs: list[Reference]) -> dict[str, Reference]:
    return {r.key: r for r in refs}


def test_a_failed_search_is_recorded_and_retried_with_backoff(arxiv: FakeArxiv) -> None:
    first = resolve_titles(REFS, SETTINGS, now=T0)
    assert len(arxiv.calls) == 1  # the first failure stops the search for this run
    assert first[0] is REFS[0]
    for ref in first[1:]:
        assert (ref.how, ref.title_searches, ref.title_searched_at) == (
            "title_search_failed",
            1,
            T0,
        )
        assert ref.title_search_error == "ConnectionError: arXiv unreachable"

    again = resolve_titles(REFS, SETTINGS, _by_key(first), now=T0 + timedelta(hours=5))
    assert again == first and len(arxiv.calls) == 1  # not due: nothing asked

    later = T0 + timedelta(hours=6)
    second = resolve_titles(REFS, SETTINGS, _by_key(first), now=later)
    assert len(arxiv.calls) == 2
    assert [(r.title_searches, r.title_searched_at) for r in second[1:]] == [(2, later)] * 2

    arxiv.down = False
    done = T0 + timedelta(hours=18)
    third = resolve_titles(REFS, SETTINGS, _by_key(second), now=done)
    assert [(r.key, r.arxiv_id, r.how, r.title_searches) for r in third[1:]] == [
        ("t1", "2307.03172", "title_search", 0),
        ("t2", None, "no_title_match", 0),
    ]
    assert all(r.title_searched_at == done and r.title_search_error is None for r in third[1:])

    calls = len(arxiv.calls)
    fourth = resolve_titles(REFS, SETTINGS, _by_key(third), now=done + timedelta(days=30))
    assert fourth == third and len(arxiv.calls) == calls  # answers are kept, not asked again


def test_the_backoff_doubles_up_to_a_week() -> None:
    failed = replace(REFS[1], how="title_search_failed", title_searched_at=T0)
    waits = []
    for failures in (1, 2, 3, 5, 7, 12):
        ref = replace(failed, title_searches=failures)
        hours = next(h for h in range(1, 24 * 8) if retry_due(ref, T0 + timedelta(hours=h)))
        waits.append(hours)
    assert waits == [6, 12, 24, 96, 168, 168]


def test_a_changed_title_is_searched_again_and_offline_keeps_earlier_answers(
    arxiv: FakeArxiv,
) -> None:
    arxiv.down = False
    answered = resolve_titles(REFS, SETTINGS, now=T0)
    offline = Settings().with_overrides({"samples.title_search": False})
    assert resolve_titles(REFS, offline, _by_key(answered)) == answered
    renamed = [REFS[0], replace(REFS[1], title="Lost in the Middle, revisited edition"), REFS[2]]
    calls = len(arxiv.calls)
    resolve_titles(renamed, SETTINGS, _by_key(answered), now=T0)
    assert len(arxiv.calls) == calls + 1


def _survey_without_ids(eprint: Path, keys: tuple[str, ...]) -> None:
    """The synthetic survey's archive with the arXiv ids of `keys` taken out of refs.bib."""
    with tarfile.open(eprint) as tar:
        files = {m.name: tar.extractfile(m).read() for m in tar if m.isfile()}  # type: ignore[union-attr]
    bib = files["refs.bib"].decode()
    for key in keys:
        entry = re.search(rf"@article\{{{key},.*?\n\}}", bib, re.S)
        assert entry is not None, key
        bib = bib.replace(entry.group(0), re.sub(r"\s*eprint = \{[^}]*\},", "", entry.group(0)))
    files["refs.bib"] = bib.encode()
    raw = io.BytesIO()
    with tarfile.open(fileobj=raw, mode="w") as tar:
        for name, data in files.items():
            info = tarfile.TarInfo(name)
            info.size = len(data)
            tar.addfile(info, io.BytesIO(data))
    eprint.write_bytes(gzip.compress(raw.getvalue()))


def test_fetch_retries_a_due_search_and_stores_sections_and_groups(
    tmp_path: Path, prefect_harness: None
) -> None:
    manifest = write_corpus(tmp_path / "corpus")
    ids = {i.cite_key: i.arxiv_id for i in manifest.papers}
    untitled = ("sato2026spectramix", "rossi2026warpgp")
    _survey_without_ids(tmp_path / "corpus" / "eprints" / manifest.survey.filename, untitled)
    with Mirror(tmp_path / "corpus") as mirror:
        settings = Settings().with_overrides(
            {
                "data_dir": str(tmp_path / "data"),
                "surveys": [SURVEY_ID],
                "arxiv.api_url": mirror.api_url,
                "arxiv.eprint_url": mirror.eprint_url,
                "arxiv.delay_s": 0.0,
                "arxiv.retries": 0,
            }
        )
        mirror.inject("/api/query", [503, 503])  # the survey's metadata, then the title search
        fetch_flow(settings, "down")
        with Warehouse(settings.db_path) as wh:
            failed = wh.rows(
                "SELECT cite_key, how, title_searches, title_searched_at, title_search_error "
                "FROM dim_survey_references WHERE how = 'title_search_failed' ORDER BY 1"
            )
            assert [(r["cite_key"], r["title_searches"]) for r in failed] == [
                ("rossi2026warpgp", 1),
                ("sato2026spectramix", 1),
            ]
            assert all(r["title_searched_at"] and "503" in r["title_search_error"] for r in failed)

        asked = len(mirror.requests_log)
        fetch_flow(settings, "too-soon")
        assert len(mirror.requests_log) == asked  # the retry is not due: nothing asked

        with Warehouse(settings.db_path) as wh:
            wh.con.execute(
                "UPDATE dim_survey_references SET title_searched_at = title_searched_at "
                "- INTERVAL 7 HOUR WHERE how = 'title_search_failed'"
            )
        fetch_flow(settings, "retried")
        fetched = {p for p, _, _ in mirror.requests_log[asked:] if p.startswith("/e-print/")}
    assert fetched == {f"/e-print/{ids[k]}" for k in untitled}
    with Warehouse(settings.db_path) as wh:
        rows = {
            r["cite_key"]: r
            for r in wh.rows(
                "SELECT cite_key, arxiv_id, how, title_searches, title_search_error, section, "
                "citation_group, citations, authors, year FROM dim_survey_references"
            )
        }
        groups = wh.rows(
            "SELECT group_id, kind, paper_ids FROM dim_citation_groups WHERE kind = 'command'"
        )
    for key in untitled:
        assert (rows[key]["arxiv_id"], rows[key]["how"]) == (ids[key], "title_search")
        assert (rows[key]["title_searches"], rows[key]["title_search_error"]) == (0, None)
    first = rows["okafor2026kernelforge"]
    assert first["section"] and first["citations"] >= 1 and first["year"] == "2026"
    assert len(first["authors"]) == 3
    trio = [g for g in groups if g["group_id"] == first["citation_group"]]
    assert [sorted(g["paper_ids"]) for g in trio] == [
        sorted(ids[k] for k in ("okafor2026kernelforge", *untitled))
    ]
