"""The offline engine's honesty (docs/design.md §9), on known answers: it is the embedded
default, what every first user sees. Its QA writer once asked "How does the test reported
for RMSE compare with the test reported for RMSE?"; its questions are well-formed and their
answers are in the evidence."""

from __future__ import annotations

import json
import re
import tarfile

import pytest

from lilo.tasks.config import OfflineSettings
from lilo.tasks.llm.offline import reply
from lilo.tasks.llm.offline._overlap import key_tokens, numbers, strip_latex
from lilo.tasks.qa.prompts import generate_messages
from lilo.tasks.synthetic.corpus import write_corpus

PAPER = (
    "We introduce KernelForge, a kernel learning method for Gaussian processes.\n"
    "On the Kin40k benchmark, KernelForge obtains a test RMSE of 0.635.\n"
    "This work has two contributions: (1) a toolkit for NLP tasks, and (2) its evaluation.\n"
    "KernelForge reaches a negative log predictive density of 1.42 on the Airline-Passengers "
    "series.\nTraining takes 3.5 GPU hours on a single accelerator."
)


def _pairs(kind: str, n: int, texts: list[str]) -> list[dict]:
    text = reply(generate_messages(kind, n, "Gaussian processes", texts, []), OfflineSettings())
    return json.loads(text.text)["pairs"]


@pytest.fixture(scope="module")
def papers(tmp_path_factory) -> list[str]:
    """The text of each paper of the synthetic corpus (its sections, as the clean stage
    joins them)."""
    root = tmp_path_factory.mktemp("corpus")
    write_corpus(root)
    texts = []
    for archive in sorted((root / "eprints").glob("*.tar.gz")):
        with tarfile.open(archive) as tar:
            sections = sorted(
                (m for m in tar.getmembers() if m.name.startswith("sections/")),
                key=lambda m: m.name,
            )
            texts.append("\n".join(tar.extractfile(m).read().decode() for m in sections))
    return [t for t in texts if t.strip()]


def test_known_questions_ask_for_the_number_their_statement_leaves_out():
    questions = {p["question"]: p["answer"] for p in _pairs("single", 10, [PAPER])}
    assert questions == {
        'What number completes this statement from the paper: "On the Kin40k benchmark, '
        'KernelForge obtains a test RMSE of ___"?': (
            "On the Kin40k benchmark, KernelForge obtains a test RMSE of 0.635."
        ),
        'What number completes this statement from the paper: "KernelForge reaches a negative '
        'log predictive density of ___ on the Airline-Passengers series"?': (
            "KernelForge reaches a negative log predictive density of 1.42 on the "
            "Airline-Passengers series."
        ),
        'What number completes this statement from the paper: "Training takes ___ GPU hours on '
        'a single accelerator"?': "Training takes 3.5 GPU hours on a single accelerator.",
    }  # the list marks "(1)", "(2)" are no figure to ask for


def _well_formed(pair: dict, statements: int) -> None:
    question, answer = pair["question"], pair["answer"]
    quoted = re.findall(r'"([^"]+)"', question)
    assert question.startswith("What number") and question.endswith('"?'), question
    assert len(quoted) == statements == len(set(quoted)), question  # nothing asked twice
    assert all(q.count("___") == 1 for q in quoted), question
    evidence = " ".join(strip_latex(e["quote"]) for e in pair["evidence"])
    assert key_tokens(answer) <= key_tokens(evidence), (answer, evidence)  # in the evidence
    for statement, quote in zip(quoted, pair["evidence"], strict=True):
        said = strip_latex(quote["quote"])
        missing = [n for n in numbers(said) if n not in numbers(statement)]
        assert missing and missing[0] in numbers(answer), (statement, answer)
        assert statement.replace("___", missing[0]) in said, (statement, said)


def test_every_single_paper_pair_of_the_corpus_is_well_formed_and_answered_by_its_evidence(
    papers,
):
    pairs = [p for text in papers for p in _pairs("single", 12, [text])]
    assert len(pairs) >= 36  # a few dozen known answers
    for pair in pairs:
        _well_formed(pair, 1)


def test_every_cross_paper_pair_names_distinct_statements_of_distinct_papers(papers):
    pairs = _pairs("cross", 12, papers[:3])
    assert len(pairs) >= 6
    for pair in pairs:
        statements = len(pair["evidence"])
        assert statements == len({e["paper"] for e in pair["evidence"]}) >= 2
        assert f"from {('two', 'three')[statements - 2]} of the papers" in pair["question"]
        _well_formed(pair, statements)
