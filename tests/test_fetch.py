"""Fetching over real HTTP from the loopback mirror (tasks/synthetic/mirror.py), serving real
corpus papers in every e-print format, with injected 429 + Retry-After, 503 and dropped
connections: each paper arrives once, and the waits are the ones the server asked for."""

from __future__ import annotations

import gzip
import io
import itertools
import random
import tarfile
from collections.abc import Iterator
from dataclasses import replace
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import pytest
import requests
from conftest import PAPERS
from llm_server import serve_in_background

from lilo.flows._preflight import check_endpoints
from lilo.tasks.clean import clean_paper
from lilo.tasks.config import Settings
from lilo.tasks.fetch import _http, fetch_eprints, fetch_metadata
from lilo.tasks.fetch._http import _PACER, _Pacer
from lilo.tasks.records import PaperText, Quarantine
from lilo.tasks.synthetic.manifest import Manifest, ManifestItem
from lilo.tasks.synthetic.mirror import DROP, Mirror

TAR_GZ, TEX_GZ, TAR, PDF = "2102.00007", "astro-ph/9911436", "1204.1664", "2401.99999"


def _item(arxiv_id: str, filename: str, title: str) -> ManifestItem:
    return ManifestItem(
        arxiv_id=arxiv_id,
        role="paper",
        title=title,
        abstract="An abstract.",
        authors=("A. Author",),
        categories=("astro-ph.SR", "stat.ML"),
        published="2021-01-29T00:00:00+00:00",
        topic=None,
        filename=filename,
        cite_key="",
        hostile=None,
        expected_reason=None,
    )


def _tar(folder: Path, compress: bool) -> bytes:
    buffer = io.BytesIO()
    with tarfile.open(fileobj=buffer, mode="w:gz" if compress else "w") as tar:
        tar.add(folder, arcname=".")
    return buffer.getvalue()


@pytest.fixture(scope="module")
def corpus(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A mirror folder with real papers as a gzipped tar, a plain tar and a single gzipped
    .tex (old-style id), plus a PDF-only paper."""
    root = tmp_path_factory.mktemp("mirror")
    eprints = root / "eprints"
    eprints.mkdir()
    files = {
        "tar_gz.tar.gz": _tar(PAPERS / "mapping-stellar-surfaces-1", compress=True),
        "plain.tar": _tar(PAPERS / "herding-bayesian-quadrature", compress=False),
        "single.gz": gzip.compress((PAPERS / "gp-automatic-nl-description/lloyd.tex").read_bytes()),
        "paper.pdf": b"%PDF-1.5\n%\xe2\xe3\xcf\xd3\nno source here\n",
    }
    for name, data in files.items():
        (eprints / name).write_bytes(data)
    items = (
        _item(TAR_GZ, "tar_gz.tar.gz", "Mapping stellar surfaces I"),
        _item(TAR, "plain.tar", "Optimally-Weighted Herding is Bayesian Quadrature"),
        _item(TEX_GZ, "single.gz", "Automatic Construction"),
        _item(PDF, "paper.pdf", "A PDF-only paper"),
    )
    (root / "manifest.json").write_text(Manifest(seed=0, items=items).to_json())
    return root


@pytest.fixture
def mirror(corpus: Path) -> Iterator[Mirror]:
    with Mirror(corpus) as served:
        yield served


def _settings(tmp_path: Path, base: str, **arxiv: float) -> Settings:
    overrides = {
        "data_dir": str(tmp_path / "data"),
        "arxiv.api_url": f"{base}/api/query",
        "arxiv.eprint_url": f"{base}/e-print/",
        "arxiv.delay_s": 0.0,
        "arxiv.backoff_s": 0.05,
        "arxiv.retries": 4,
    }
    return Settings().with_overrides({**overrides, **{f"arxiv.{k}": v for k, v in arxiv.items()}})


def _stored(settings: Settings) -> list[Path]:
    return sorted(p for p in settings.archive_dir.rglob("*") if p.is_file())


def test_every_format_and_id_style(mirror: Mirror, tmp_path: Path) -> None:
    settings = _settings(tmp_path, mirror.base_url)
    ids = [f"{TAR_GZ}v2", TEX_GZ, TAR, PDF]
    raws, failures = fetch_eprints(ids, settings)
    assert failures == []
    assert [(r.arxiv_id, r.format) for r in raws] == [
        (TAR_GZ, "tar.gz"),
        (TEX_GZ, "tex.gz"),
        (TAR, "tar"),
        (PDF, "pdf"),
    ]
    assert [path for path, _, _ in mirror.requests_log] == [f"/e-print/{i}" for i in ids]
    assert set(mirror.user_agents) == {settings.arxiv.user_agent}
    assert len(_stored(settings)) == 4

    cleaned = [clean_paper(raw, tmp_path / "work", settings.clean) for raw in raws]
    assert [type(c).__name__ for c in cleaned] == ["PaperText"] * 3 + ["Quarantine"]
    assert [c.main_file for c in cleaned[:3] if isinstance(c, PaperText)] == [
        "ms.tex",
        "main.tex",
        "herding-bmc.tex",
    ]
    assert isinstance(cleaned[3], Quarantine) and cleaned[3].reason == "no_latex_source"


class _Top(random.Random):
    """An RNG whose every draw is the top of its range: the jittered backoff at its bound."""

    def uniform(self, a: float, b: float) -> float:
        return b


def test_faults_are_retried_and_the_paper_arrives_once(
    mirror: Mirror, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    settings = _settings(tmp_path, mirror.base_url)
    monkeypatch.setattr(_http, "_RNG", _Top())  # the backoff's waits at the top of their range
    prefix = f"/e-print/{TAR_GZ}"
    mirror.inject(prefix, [429], retry_after=0.6)
    mirror.inject(prefix, [503], retry_after=0.3)
    mirror.inject(prefix, [503, DROP])
    raws, failures = fetch_eprints([TAR_GZ], settings)

    assert failures == [] and [r.arxiv_id for r in raws] == [TAR_GZ]
    log = [(status, at) for path, status, at in mirror.requests_log if path == prefix]
    assert [status for status, _ in log] == [429, 503, 503, DROP, 200]
    gaps = [later - earlier for (_, earlier), (_, later) in zip(log, log[1:], strict=False)]
    backoff = settings.arxiv.backoff_s
    assert gaps[0] >= 0.6  # Retry-After: 0.6 beats the 0.05 s backoff
    assert gaps[1] >= 0.3  # Retry-After: 0.3
    assert gaps[2] >= backoff * 4 and gaps[3] >= backoff * 8  # exponential backoff's bound
    assert _stored(settings) == [Path(raws[0].path)]

    again, _ = fetch_eprints([TAR_GZ], settings, known={TAR_GZ: raws[0]})
    assert again == raws and len(mirror.requests_log) == len(log)


def test_exhausted_retries_quarantine_and_store_nothing(mirror: Mirror, tmp_path: Path) -> None:
    settings = _settings(tmp_path, mirror.base_url, retries=2)
    mirror.inject(f"/e-print/{TAR}", [503, DROP, 429], retry_after=0.1)
    raws, [failure, missing] = fetch_eprints([TAR, "2999.00001"], settings)
    assert raws == [] and "HTTP 404" in missing.detail
    assert (failure.item_id, failure.stage, failure.reason) == (TAR, "fetch", "fetch_failed")
    assert "HTTP 429" in failure.detail and "after 3 attempts" in failure.detail
    assert _stored(settings) == []


def test_not_found_is_not_retried(mirror: Mirror, tmp_path: Path) -> None:
    settings = _settings(tmp_path, mirror.base_url)
    raws, [failure] = fetch_eprints(["2999.00001"], settings)
    assert raws == [] and "HTTP 404" in failure.detail
    assert [status for _, status, _ in mirror.requests_log] == [404]


def test_the_pacer_spaces_requests_by_the_delay_on_a_fake_clock() -> None:
    now = [100.0]
    pacer = _Pacer(clock=lambda: now[0], sleep=lambda s: now.__setitem__(0, now[0] + s))
    started = []
    for gap in (0.0, 1.0, 5.0):  # what the caller spends between requests
        now[0] += gap
        pacer.wait(3.0)
        started.append(now[0])
    # the first at once; the second waits out the rest of 3 s; the third is already past it
    assert started == [100.0, 103.0, 108.0]


def test_fetching_goes_through_the_process_pacer(
    mirror: Mirror, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Each request goes when the process's pacer lets it, `delay_s` after the one before.
    Timed where the pacer lets them go, on its clock: when the mirror sees them arrive
    depends on how long each took to get there, which a loaded machine varies."""
    went: list[float] = []
    wait = _PACER.wait

    def noting(delay_s: float) -> float:
        went.append(wait(delay_s))
        return went[-1]

    monkeypatch.setattr(_PACER, "wait", noting)
    fetch_eprints([TAR_GZ, TAR, PDF], _settings(tmp_path, mirror.base_url, delay_s=0.05))
    arrived = [at for _, _, at in mirror.requests_log]  # time.monotonic(), as the pacer's
    assert len(went) == len(arrived) == 3
    assert all(later - earlier >= 0.05 - 1e-9 for earlier, later in itertools.pairwise(went))
    # the mirror saw each request after the pacer let it go, and before the next one went
    assert went[0] <= arrived[0] <= went[1] <= arrived[1] <= went[2] <= arrived[2]


def test_arxiv_is_fetched_with_requests(mirror: Mirror, tmp_path: Path, monkeypatch) -> None:
    """The preflight's look, the feed (through the `arxiv` client) and e-prints are each
    sent by a `requests` adapter (docs/design.md §3), which notes what it sends."""
    sent: list[tuple[str, str]] = []
    send = requests.adapters.HTTPAdapter.send

    def noting(self: requests.adapters.HTTPAdapter, request: Any, *args: Any, **kw: Any) -> Any:
        sent.append((request.method, urlsplit(request.url).path))
        return send(self, request, *args, **kw)

    monkeypatch.setattr(requests.adapters.HTTPAdapter, "send", noting)
    settings = _settings(tmp_path, mirror.base_url)
    check_endpoints(settings)
    [meta] = fetch_metadata([TAR_GZ], settings.arxiv)
    [raw], [] = fetch_eprints([TAR_GZ], settings)
    assert (meta.arxiv_id, raw.arxiv_id) == (TAR_GZ, TAR_GZ)
    assert sent == [("HEAD", "/api/query"), ("GET", "/api/query"), ("GET", f"/e-print/{TAR_GZ}")]
    assert [path for path, _, _ in mirror.requests_log] == [path for _, path in sent[1:]]


def test_metadata_through_the_arxiv_client_is_retried(mirror: Mirror, tmp_path: Path) -> None:
    settings = _settings(tmp_path, mirror.base_url)
    mirror.inject("/api/query", [429], retry_after=0.4)
    mirror.inject("/api/query", [503, DROP])
    [meta] = fetch_metadata([f"{TAR_GZ}v1"], settings.arxiv)
    assert meta.arxiv_id == TAR_GZ and meta.title == "Mapping stellar surfaces I"
    log = mirror.requests_log
    assert [status for _, status, _ in log] == [429, 503, DROP, 200]
    assert log[1][2] - log[0][2] >= 0.4
    assert set(mirror.user_agents) == {settings.arxiv.user_agent}


class _CutShort(BaseHTTPRequestHandler):
    """Sends 1,000 bytes of a longer e-print and hangs up, on the first request."""

    calls = 0

    def log_message(self, format: str, *args: object) -> None:
        """Quiet."""

    def do_GET(self) -> None:
        type(self).calls += 1
        body = gzip.compress((PAPERS / "gp-automatic-nl-description/lloyd.tex").read_bytes())
        self.send_response(200)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body if self.calls > 1 else body[:1000])
        self.close_connection = True


def test_cut_short_download_is_retried_not_kept(tmp_path: Path) -> None:
    server = ThreadingHTTPServer(("127.0.0.1", 0), _CutShort)
    serve_in_background(server)
    try:
        settings = _settings(tmp_path, f"http://127.0.0.1:{server.server_address[1]}")
        [raw], failures = fetch_eprints(["2401.00001"], settings)
    finally:
        server.shutdown()
        server.server_close()
    assert failures == [] and _CutShort.calls == 2
    assert raw.format == "tex.gz" and raw.size_bytes == Path(raw.path).stat().st_size
    assert _stored(settings) == [Path(raw.path)]
    assert replace(raw, title="") == raw  # no metadata asked for, none invented
