"""A group's published questions (`questions/single|combine/group_N.json`) and the approved
QA pairs they become (docs/design.md §6, §14)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from lilo.tasks.benchmark._files import Files, problem
from lilo.tasks.records import QAPair, Quarantine, content_id

__all__ = ["QUESTION_FOLDERS", "Question", "qa_pair", "read_questions"]

# lilo's kind -> the benchmark's folder: single-paper and cross-paper ("combine") questions.
QUESTION_FOLDERS = {"single": "questions/single", "cross": "questions/combine"}


@dataclass(frozen=True)
class Question:
    kind: str  # single | cross
    source: str  # the file, relative to the dataset folder
    index: int  # 0-based position in the file's list
    papers: tuple[str, ...]  # file names in the group, as the question names them
    topic: str
    question: str
    answer: str
    reference: str

    @property
    def where(self) -> str:
        return f"{self.source}#{self.index}"


def read_questions(
    files: Files, number: int, group_files: set[str], problems: list[Quarantine]
) -> list[Question]:
    """The group's questions, single then cross, in file order. A malformed file is skipped,
    a malformed question or one naming a file not in the group is skipped: each a problem."""
    found: list[Question] = []
    for kind, folder in QUESTION_FOLDERS.items():
        rel = f"{folder}/group_{number}.json"
        if not (files.root / rel).is_file():
            problems.append(
                problem(
                    files.item(rel),
                    "missing_questions",
                    f"{files.shown(rel)}: missing: group_{number} has no {kind} questions",
                )
            )
            continue
        data = files.read_json(rel, problems)
        if data is None:
            continue
        if not isinstance(data, list):
            problems.append(
                problem(
                    files.item(rel),
                    "malformed_json",
                    f"{files.shown(rel)}: expected a JSON list of questions: file skipped",
                )
            )
            continue
        for index, item in enumerate(data):
            where = f"{files.shown(rel)}#{index}"
            question, why = _question(item, kind, rel, index)
            if question is None:
                problems.append(
                    problem(
                        files.item(f"{rel}#{index}"),
                        "bad_question",
                        f"{where}: {why}: question skipped",
                    )
                )
                continue
            unknown = [p for p in question.papers if p not in group_files]
            if unknown:
                problems.append(
                    problem(
                        files.item(f"{rel}#{index}"),
                        "unknown_paper",
                        f"{where}: {', '.join(unknown)} not in group_{number}: question skipped",
                    )
                )
                continue
            found.append(question)
    return found


def _question(item: Any, kind: str, source: str, index: int) -> tuple[Question | None, str]:
    if not isinstance(item, dict):
        return None, "not a JSON object"
    papers = item.get("paper")
    papers = [papers] if isinstance(papers, str) else papers
    if not isinstance(papers, list) or not papers or not all(isinstance(p, str) for p in papers):
        return None, "'paper' must be a file name or a list of them"
    texts = {k: item.get(k) for k in ("question", "answer")}
    for key, value in texts.items():
        if not isinstance(value, str) or not value.strip():
            return None, f"'{key}' must be a non-empty string"
    reference = item.get("reference", "")
    if isinstance(reference, list):
        reference = "; ".join(str(r) for r in reference)
    topic = item.get("topic")
    return Question(
        kind=kind,
        source=source,
        index=index,
        papers=tuple(dict.fromkeys(papers)),
        topic=topic.strip() if isinstance(topic, str) else "",
        # verbatim: the reference's scripts render the published text as it is
        question=str(texts["question"]),
        answer=str(texts["answer"]),
        reference=str(reference).strip(),
    ), ""


def qa_pair(question: Question, sample_id: str, ids: dict[str, str], name: str) -> QAPair:
    """An approved pair as imported. `ids` are the sample's paper files in order with the
    id each is stored under; evidence names each paper the question names by position
    (1-based) and id, quoting the benchmark's `reference`. The id covers the sample, kind,
    source file, index and text."""
    files = list(ids)
    evidence = tuple(
        {"paper": files.index(f) + 1, "paper_id": ids[f], "quote": question.reference}
        for f in question.papers
    )
    origin = f"import:{name}"
    return QAPair(
        qa_id=content_id(
            sample_id, question.kind, question.source, question.index, question.question
        ),
        sample_id=sample_id,
        kind=question.kind,
        paper_ids=tuple(ids[f] for f in question.papers),
        question=question.question,
        answer=question.answer,
        evidence=evidence,  # type: ignore[arg-type]  # position is an int
        status="approved",
        round=1,
        reviewer=origin,
        reason=question.where,
        prompt_version=origin,
        backbone=origin,
    )
