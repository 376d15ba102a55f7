"""LongInOutBench, the RAL-Writer paper's published benchmark, read from a user's clone
(docs/design.md §14). It has no license: lilo reads the files where the user keeps them and never
copies them into its repository.

Two pure steps around the papers suite (tasks/validate.py), which the flow runs between
them: `read_longinoutbench` reads every file and reports each problem as one line naming
it; `build_dataset` turns every group of three readable papers into a sample with its
approved QA pairs and their review decisions. What the suite finds in a published paper
(an appendix, a bibliography, comment lines, no title, ...) is a warning kept with the paper
(tasks/benchmark/_warnings.py), never a reason to drop it: the benchmark is imported as
published.
"""

from __future__ import annotations

import os
from collections import Counter
from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from datetime import datetime
from pathlib import Path

from lilo.tasks.benchmark._assets import Asset, read_assets
from lilo.tasks.benchmark._files import PAPERS_DIR, Files, locate_dataset, paper_id_of, problem
from lilo.tasks.benchmark._layout import group_folders, read_descriptions, report_orphans
from lilo.tasks.benchmark._questions import Question, qa_pair, read_questions
from lilo.tasks.benchmark._scripts import read_method_assets
from lilo.tasks.benchmark._warnings import warning_kinds
from lilo.tasks.qa.review import approval
from lilo.tasks.records import PaperText, QADecision, QAPair, Quarantine, Sample

__all__ = [
    "Benchmark",
    "Group",
    "ImportedDataset",
    "build_dataset",
    "own_texts",
    "read_longinoutbench",
]

GROUP_SIZE = 3


@dataclass(frozen=True)
class Group:
    """A group folder holding three papers, sorted by file name (deterministic), and in the
    order the folder's listing gave them here (`os.listdir`), which is the order the
    reference reads them in; another file system may list them in another order."""

    number: int
    folder: str  # relative to the dataset folder
    files: tuple[str, ...]
    listing: tuple[str, ...]  # the same files in the folder's listing order
    survey_id: str  # the description's `source`, or ""
    category: tuple[str, ...]
    questions: tuple[Question, ...]

    @property
    def paper_ids(self) -> tuple[str, ...]:
        return tuple(paper_id_of(f) for f in self.files)


@dataclass(frozen=True)
class Benchmark:
    files: Files
    group_folders: int  # group_N folders found, whatever they hold
    paper_files: int  # .tex files in the folders holding three
    groups: tuple[Group, ...]  # those with three readable, consistent papers; numeric order
    papers: tuple[PaperText, ...]  # one per paper id, to validate
    assets: tuple[Asset, ...]
    stand_ins: tuple[str, ...]  # pack assets not stored: lilo's own stands in
    problems: tuple[Quarantine, ...]
    # paper id -> the id of its own text, where the id is stored with other text (own_texts)
    renamed: Mapping[str, str] = field(default_factory=dict)

    @property
    def name(self) -> str:
        return self.files.name

    def paper_id(self, file_name: str) -> str:
        """The id the paper in `file_name` is stored under."""
        found = paper_id_of(file_name)
        return self.renamed.get(found, found)


@dataclass(frozen=True)
class ImportedDataset:
    papers: tuple[PaperText, ...]  # every paper read, `warnings` holding the suite's findings
    samples: tuple[Sample, ...]
    qa_pairs: tuple[QAPair, ...]
    decisions: tuple[QADecision, ...]
    problems: tuple[Quarantine, ...]  # the reader's: files that could not be read


def read_longinoutbench(path: Path, name: str, hard_links: bool = False) -> Benchmark:
    """Read the clone at `path` (or its dataset/ folder). Raises BenchmarkError only when
    there is nothing to read (a missing folder); anything else is a problem, and the rest
    is read. A file with more than one name is read only with `hard_links`."""
    files = Files(path, locate_dataset(path, name), name, hard_links)
    problems: list[Quarantine] = []
    descriptions, description = read_descriptions(files, problems)
    folders = group_folders(files, problems)
    report_orphans(files, folders, descriptions, problems)
    papers: dict[str, PaperText] = {}
    groups: list[Group] = []
    paper_files = 0
    for number in sorted(folders):
        rel = f"{PAPERS_DIR}/group_{number}"
        tex = sorted(p.name for p in (files.root / rel).glob("*.tex") if p.is_file())
        listing = [f for f in os.listdir(files.root / rel) if f in tex]
        if len(tex) != GROUP_SIZE:
            problems.append(
                problem(
                    f"{name}/group_{number}",
                    "group_size",
                    f"{files.shown(rel)}: {len(tex)} papers, a sample needs {GROUP_SIZE}: "
                    "group skipped",
                )
            )
            continue
        paper_files += len(tex)
        if not _read_papers(files, rel, tex, papers, problems):
            continue
        entry = descriptions.get(number, {})
        category = entry.get("category")
        groups.append(
            Group(
                number=number,
                folder=rel,
                files=tuple(tex),
                listing=tuple(listing),
                survey_id=str(entry.get("source") or ""),
                category=tuple(map(str, category)) if isinstance(category, list) else (),
                questions=tuple(read_questions(files, number, set(tex), problems)),
            )
        )
    assets, stand_ins, asset_problems = read_assets(files)
    method_assets, method_problems = read_method_assets(files)
    return Benchmark(
        files=files,
        group_folders=len(folders),
        paper_files=paper_files,
        groups=tuple(groups),
        papers=tuple(papers.values()),
        assets=tuple(assets + method_assets + ([description] if description else [])),
        stand_ins=tuple(stand_ins),
        problems=tuple(problems + asset_problems + method_problems),
    )


def _read_papers(
    files: Files,
    rel: str,
    tex: list[str],
    papers: dict[str, PaperText],
    problems: list[Quarantine],
) -> bool:
    """Read a group's papers into `papers` (one per id: groups may share a paper); False
    when a paper id it shares with an earlier group holds other text."""
    for file_name in tex:
        paper = files.read_paper(f"{rel}/{file_name}", problems)
        if paper is None:
            continue  # not UTF-8: quarantined, and the group with it
        earlier = papers.setdefault(paper.paper_id, paper)
        if earlier.content_sha256 != paper.content_sha256:
            problems.append(
                problem(
                    f"{files.name}/{rel}",
                    "duplicate_paper",
                    f"{paper.main_file}: other text than {earlier.main_file} under the same "
                    "id: group skipped",
                )
            )
            return False
    return True


def own_texts(bench: Benchmark, stored: Mapping[str, str]) -> Benchmark:
    """The benchmark with each paper whose id `stored` (id -> content hash of the warehouse's
    papers) holds with other text given an id of its own text, `<id>@<12 hex digits of its
    hash>`: a paper's text belongs to the version that imported it, and no import changes
    what another version's samples read (docs/design.md §14)."""
    renamed = {
        p.paper_id: f"{p.paper_id}@{p.content_sha256[:12]}"
        for p in bench.papers
        if stored.get(p.paper_id, p.content_sha256) != p.content_sha256
    }
    if not renamed:
        return bench
    papers = tuple(replace(p, paper_id=renamed.get(p.paper_id, p.paper_id)) for p in bench.papers)
    return replace(bench, papers=papers, renamed=renamed)


def build_dataset(bench: Benchmark, findings: list[Quarantine], at: datetime) -> ImportedDataset:
    """Every group as a sample, in numeric group order, with its questions as approved
    pairs. `findings` (the papers suite's quarantine rows) become the papers' warnings."""
    name = bench.name
    kinds = {q.item_id: warning_kinds(q.detail) for q in findings}
    papers = tuple(
        replace(p, warnings=(*p.warnings, *kinds.get(p.paper_id, ()))) for p in bench.papers
    )
    by_id = {p.paper_id: p for p in papers}
    problems = list(bench.problems)
    samples: list[Sample] = []
    pairs: list[QAPair] = []
    for group in bench.groups:
        sample_id = f"{name}/group_{group.number}"
        paper_ids = tuple(bench.paper_id(f) for f in group.files)
        unread = [p for p in paper_ids if p not in by_id]
        if unread:  # not UTF-8: the text cannot be read at all
            problems.append(
                problem(
                    sample_id,
                    "paper_unreadable",
                    f"{bench.files.shown(group.folder)}: {', '.join(unread)} unreadable: "
                    "group skipped",
                )
            )
            continue
        topics = Counter(q.topic for q in group.questions if q.topic)
        samples.append(
            Sample(
                sample_id=sample_id,
                dataset_version=name,
                paper_ids=paper_ids,
                listing_order=tuple(bench.paper_id(f) for f in group.listing),
                topic=topics.most_common(1)[0][0] if topics else ", ".join(group.category),
                survey_id=group.survey_id,
                input_words=sum(by_id[p].words for p in paper_ids),
                group_kind="import",
            )
        )
        ids = {f: bench.paper_id(f) for f in group.files}
        pairs += [qa_pair(q, sample_id, ids, name) for q in group.questions]
    return ImportedDataset(
        papers=papers,
        samples=tuple(samples),
        qa_pairs=tuple(pairs),
        # approved as published, recorded like any review decision (a second import: none)
        decisions=tuple(
            approval(p, p.reviewer, "file", f"imported from {p.reason}", at) for p in pairs
        ),
        problems=tuple(problems),
    )
