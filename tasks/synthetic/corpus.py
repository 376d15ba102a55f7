"""A self-contained demo corpus: one survey, twelve papers in three topics and four hostile
items, written as arXiv e-prints with a manifest of ground truth. It lets the whole pipeline
(fetch, clean, samples, QA, scores) run offline against the loopback mirror, and lets tests
check each stage against known answers: planted facts for QA and consistency, expected
quarantine reasons for the cleaner (docs/design.md §3-§4)."""

from __future__ import annotations

import gzip
import io
import random
import tarfile
from pathlib import Path

from lilo.tasks.synthetic._paper import BuiltPaper, build_paper, format_value
from lilo.tasks.synthetic._survey import FURTHER, SURVEY_TITLE, Cited, build_survey
from lilo.tasks.synthetic._topics import TOPICS, Method, Topic
from lilo.tasks.synthetic.manifest import MANIFEST_NAME, Fact, Manifest, ManifestItem

__all__ = ["SURVEY_ID", "write_corpus"]

SURVEY_ID = "2601.00100"
_YEAR = 2026
_MTIME = 1767225600  # 2026-01-01: fixed, so archives are byte-identical across runs
_FIRST = (
    "Ada",
    "Bruno",
    "Chiara",
    "Dmitri",
    "Elif",
    "Farah",
    "Goran",
    "Hana",
    "Ivo",
    "Jun",
    "Kemi",
    "Lars",
    "Mei",
    "Nadia",
    "Omar",
    "Priya",
    "Rafael",
    "Sofia",
    "Tomas",
    "Yara",
)
_LAST = (
    "Okafor",
    "Lindqvist",
    "Moreau",
    "Tanaka",
    "Haddad",
    "Novak",
    "Castillo",
    "Brennan",
    "Sato",
    "Keller",
    "Adeyemi",
    "Rossi",
    "Varga",
    "Nguyen",
    "Holm",
    "Mendes",
)
# Hostile items (docs/design.md §3-§4): what each is and the quarantine reason it must get.
_HOSTILE = (
    (
        "pdf_only",
        "no_latex_source",
        1,
        Method("ScanFlow", "Tabular Flows from Scanned Tables", ("table parsing", "flow fitting")),
    ),
    (
        "unsafe_archive",
        "unsafe_archive",
        0,
        Method(
            "KernelScout", "Scouting Kernel Grammars with Bandits", ("bandit search", "kernel arms")
        ),
    ),
    (
        "not_utf8",
        "not_utf8",
        1,
        Method(
            "FlowAccent", "Accent-Robust Flows for Density Estimation", ("accent tying", "flows")
        ),
    ),
    (
        "too_short",
        "too_short",
        2,
        Method("TinyTagger", "A Tiny Tagger for Few-Shot NER", ("tiny encoders", "tag pruning")),
    ),
)


def write_corpus(out_dir: Path, seed: int = 0, together: int = 0, scale: float = 1.0) -> Manifest:
    """Write `eprints/<id>.tar.gz|.pdf` and `manifest.json` in `out_dir`; same seed, same bytes.
    `together` > 0: the survey's conclusion cites that many papers in one command (for
    samples of more papers than a topic's four, `samples.papers_per_sample`). `scale` < 1:
    each paper's prose scaled by it (a small model on 2 cores reads three papers in
    seconds; `clean.min_words` must fall with it), numbered from 2602.00001 instead of
    2601.00001 so that the two corpora never mix in one warehouse (a fetched id is not
    fetched again)."""
    block = "2601" if scale == 1.0 else "2602"
    eprints = out_dir / "eprints"
    eprints.mkdir(parents=True, exist_ok=True)
    items: list[ManifestItem] = []
    groups: list[tuple[Topic, list[Cited]]] = []
    number = 0
    for topic in TOPICS:
        values = _values(random.Random(f"{seed}:values:{topic.key}"), topic)
        cited = []
        for method in topic.methods:
            number += 1
            arxiv_id = f"{block}.{number:05d}"
            rng = random.Random(f"{seed}:{arxiv_id}")
            authors = _authors(rng)
            paper = build_paper(rng, topic, method, authors, values[method.name], scale)
            item = _item(arxiv_id, method, topic, topic.title, authors, paper, number)
            (eprints / item.filename).write_bytes(_tar_gz(paper.files))
            items.append(item)
            cited.append(_cited(item, method))
        groups.append((topic, cited))
    further = []
    for hostile, reason, topic_index, method in _HOSTILE:
        number += 1
        arxiv_id = f"{block}.{number:05d}"
        rng = random.Random(f"{seed}:{arxiv_id}")
        topic = TOPICS[topic_index]
        authors = _authors(rng)
        values = _values(random.Random(f"{seed}:values:{arxiv_id}"), topic, (method,))
        size = scale * (0.22 if hostile == "too_short" else 1.0)
        paper = build_paper(rng, topic, method, authors, values[method.name], size)
        item = _item(arxiv_id, method, topic, FURTHER, authors, paper, number, hostile, reason)
        (eprints / item.filename).write_bytes(_hostile_bytes(hostile, paper))
        items.append(item)
        further.append(_cited(item, method))
    survey_id = SURVEY_ID.replace("2601", block)
    survey_rng = random.Random(f"{seed}:{SURVEY_ID}")
    items.insert(0, _write_survey(survey_id, survey_rng, eprints, groups, further, together))
    manifest = Manifest(seed=seed, items=tuple(items))
    (out_dir / MANIFEST_NAME).write_text(manifest.to_json())
    return manifest


def _values(
    rng: random.Random, topic: Topic, methods: tuple[Method, ...] | None = None
) -> dict[str, dict[tuple[str, str], float]]:
    """Each method's result per (dataset, metric), distinct across methods once formatted,
    so that "which method is best on X" has exactly one answer."""
    out: dict[str, dict[tuple[str, str], float]] = {m.name: {} for m in methods or topic.methods}
    for dataset, _ in topic.datasets:
        for metric in topic.metrics:
            seen: set[str] = set()
            for name in out:
                value = rng.uniform(metric.low, metric.high)
                while format_value(value, metric.decimals) in seen:
                    value = rng.uniform(metric.low, metric.high)
                seen.add(format_value(value, metric.decimals))
                out[name][(dataset, metric.name)] = value
    return out


def _authors(rng: random.Random) -> list[str]:
    return [f"{rng.choice(_FIRST)} {last}" for last in rng.sample(_LAST, rng.randint(2, 4))]


def _item(
    arxiv_id: str,
    method: Method,
    topic: Topic,
    section: str,
    authors: list[str],
    paper: BuiltPaper,
    number: int,
    hostile: str | None = None,
    reason: str | None = None,
) -> ManifestItem:
    facts = (
        ()
        if hostile
        else tuple(
            Fact(f"{arxiv_id}-f{i}", arxiv_id, f.sentence, f.term, f.value, f.dataset, f.metric)
            for i, f in enumerate(paper.facts, 1)
        )
    )
    return ManifestItem(
        arxiv_id=arxiv_id,
        role="paper",
        title=paper.title,
        abstract=paper.abstract,
        authors=tuple(authors),
        categories=topic.categories,
        published=f"{_YEAR}-01-{1 + number:02d}T12:00:00Z",
        topic=section,
        filename=f"{arxiv_id}.pdf" if hostile == "pdf_only" else f"{arxiv_id}.tar.gz",
        cite_key=f"{authors[0].split()[-1].lower()}{_YEAR}{method.name.lower()}",
        hostile=hostile,
        expected_reason=reason,
        facts=facts,
    )


def _cited(item: ManifestItem, method: Method) -> Cited:
    return Cited(
        item.arxiv_id,
        item.cite_key,
        method.name,
        item.title,
        item.authors,
        _YEAR,
        item.categories[0],
    )


def _hostile_bytes(kind: str, paper: BuiltPaper) -> bytes:
    if kind == "pdf_only":
        return (
            b"%PDF-1.4\n%\xe2\xe3\xcf\xd3\n1 0 obj\n<< /Type /Catalog >>\nendobj\n"
            b"trailer\n<< /Root 1 0 R >>\n%%EOF\n"
        )
    files: dict[str, str | bytes] = dict(paper.files)
    if kind == "unsafe_archive":
        files["../escape.tex"] = "\\section{Escaped}\nThis file must never leave the archive.\n"
    if kind == "not_utf8":
        # Saved as UTF-16 with no byte-order mark (a Windows editor's doing): no 8-bit
        # fallback makes text of it, so it must be quarantined rather than guessed at.
        main = paper.files[paper.main_file].replace(
            "\\section{Related Work}\n\\label{sec:related}\n",
            "\\section{Related Work}\n\\label{sec:related}\n"
            "A na\u00efve baseline follows the r\u00e9sum\u00e9 of earlier work.\n",
        )
        files[paper.main_file] = main.encode("utf-16-le")
    return _tar_gz(files)


def _write_survey(
    survey_id: str,
    rng: random.Random,
    eprints: Path,
    groups: list[tuple[Topic, list[Cited]]],
    further: list[Cited],
    together: int,
) -> ManifestItem:
    authors = _authors(rng)
    abstract = (
        "We survey methods that learn from little data in three areas: Gaussian-process "
        "kernels, neural density estimation and low-resource named entity recognition. "
        "For each area we group methods by their central idea, compare their reported "
        "results and list open problems."
    )
    files = build_survey(rng, groups, further, authors, abstract, together)
    item = ManifestItem(
        arxiv_id=survey_id,
        role="survey",
        title=SURVEY_TITLE,
        abstract=abstract,
        authors=tuple(authors),
        categories=("cs.LG", "stat.ML", "cs.CL"),
        published=f"{_YEAR}-01-28T12:00:00Z",
        topic=None,
        filename=f"{survey_id}.tar.gz",
        cite_key="",
        hostile=None,
        expected_reason=None,
    )
    (eprints / item.filename).write_bytes(_tar_gz(files))
    return item


def _tar_gz(files: dict[str, str] | dict[str, str | bytes]) -> bytes:
    """A gzipped tar with fixed metadata (mtime, owner) so that the bytes are reproducible."""
    raw = io.BytesIO()
    with tarfile.open(fileobj=raw, mode="w", format=tarfile.USTAR_FORMAT) as tar:
        for name, content in files.items():
            data = content.encode() if isinstance(content, str) else content
            info = tarfile.TarInfo(name)
            info.size, info.mtime, info.mode = len(data), _MTIME, 0o644
            tar.addfile(info, io.BytesIO(data))
    return gzip.compress(raw.getvalue(), mtime=0)
