"""QA generation against a scripted model behind a loopback OpenAI-compatible endpoint:
malformed replies (not JSON, truncated, wrong fields), the retry that shows the model its
error, failed attempts kept with their raw output, and the evidence and duplicate checks."""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator

import pytest
from llm_server import PAIRS, PAPER, LLMServer

from lilo.tasks.config import Settings
from lilo.tasks.embeddings import Embedder
from lilo.tasks.llm import make_client
from lilo.tasks.qa import (
    QAFormatError,
    ask_json,
    cross_problem,
    evidence_problem,
    generate_qa,
    parse_qa_items,
)
from lilo.tasks.records import PaperText, Sample

KEEP = json.dumps({"keep": True, "reason": "specific and answerable"})


@pytest.fixture
def model() -> Iterator[LLMServer]:
    with LLMServer() as server:
        server.respond = lambda prompt, n: KEEP
        yield server


def _settings(tmp_path, server: LLMServer) -> Settings:
    # One paper, two single-context pairs, one round: one generation call per test.
    return server.settings(
        tmp_path,
        **{"qa.quota_single": 2, "qa.quota_cross": 0, "qa.max_rounds": 1, "qa.review": "manual"},
    )


def _generate(tmp_path, server: LLMServer, respond: Callable[[str, int], str]):
    server.respond = respond
    settings = _settings(tmp_path, server)
    paper = PaperText("2601.00001", "KernelForge", PAPER, 60, 80, "main.tex", "t", "s", "c")
    sample = Sample("s1", "v1", ("2601.00001",), "Kernels", "2601.00000", 60, "command")
    return generate_qa(
        sample,
        [paper],
        settings.qa,
        settings.judge,
        make_client(settings),
        Embedder(settings.embedding, settings.data_dir),
    )


def _generator(reply: str, filter_reply: str = KEEP) -> Callable[[str, int], str]:
    return lambda prompt, n: filter_reply if "Decide whether" in prompt else reply


# -- strict parsing ---------------------------------------------------------------------


@pytest.mark.parametrize(
    "reply",
    [
        "```json\n" + json.dumps(PAIRS) + "\n```",
        "Here are the pairs:\n" + json.dumps(PAIRS) + "\nHope this helps.",
        json.dumps(PAIRS, indent=1).replace("}\n]", "},\n]"),  # trailing comma
    ],
    ids=["code-fence", "prose-around", "trailing-comma"],
)
def test_safe_repairs(reply):
    assert [i["question"] for i in parse_qa_items(reply, n_papers=1)] == [
        g["question"] for g in PAIRS
    ]


@pytest.mark.parametrize(
    ("reply", "error"),
    [
        ("I could not find any suitable questions in this paper.", "invalid JSON"),
        (json.dumps(PAIRS)[:-40], "invalid JSON"),  # truncated mid-object
        (json.dumps({"question": "q", "answer": "a"}), "expected a JSON list"),
        ("[]", "empty"),
        (json.dumps([{**PAIRS[0], "difficulty": "hard"}]), "item 1: unexpected field 'difficulty'"),
        (
            json.dumps([{**PAIRS[0], "answer": ""}]),
            "'answer': String should have at least 1 character",
        ),
        (
            json.dumps([{**PAIRS[0], "evidence": []}]),
            "'evidence': List should have at least 1 item",
        ),
        (
            json.dumps([{**PAIRS[0], "evidence": [{"paper": "1", "quote": "x"}]}]),
            "'evidence.0.paper': Input should be a valid integer",
        ),
        (
            json.dumps([{**PAIRS[0], "evidence": [{"paper": 2, "quote": "x"}]}]),
            "'evidence.0.paper': paper 2 is not between 1 and 1",
        ),
        (
            json.dumps([{**PAIRS[0], "evidence": [{"text": "x"}]}]),
            "unexpected field 'evidence.0.text'",
        ),
    ],
    ids=[
        "not-json",
        "truncated",
        "object-not-array",
        "empty",
        "extra-field",
        "empty-answer",
        "no-evidence",
        "paper-as-string",
        "paper-out-of-range",
        "evidence-wrong-keys",
    ],
)
def test_malformed_replies_are_errors_that_say_why(reply, error):
    with pytest.raises(QAFormatError, match=error.replace("[", r"\[").replace("]", r"\]")):
        parse_qa_items(reply, n_papers=1)


def test_retry_shows_the_model_its_reply_and_the_error(tmp_path, model):
    model.respond = lambda prompt, n: json.dumps(PAIRS) if n > 2 else json.dumps(PAIRS)[:-40]
    llm = make_client(_settings(tmp_path, model))
    messages = [{"role": "user", "content": "write pairs"}]
    items, reply, error = ask_json(
        llm, messages, lambda r: parse_qa_items(r, n_papers=1), purpose="qa_single"
    )
    assert len(items) == 2 and error == ""
    first, retry = model.prompts
    assert retry[:1] == first
    assert retry[1] == {"role": "assistant", "content": json.dumps(PAIRS)[:-40]}
    assert "invalid JSON" in retry[2]["content"]


@pytest.mark.parametrize(
    "bad",
    ["Sorry, I cannot help with that.", json.dumps(PAIRS)[:-40], json.dumps([{"q": "?"}])],
    ids=["not-json", "truncated", "wrong-fields"],
)
def test_unusable_after_retry_is_a_failed_attempt_with_raw_output(tmp_path, model, bad):
    result = _generate(tmp_path, model, _generator(bad))
    assert len(model.prompts) == 2  # the call and its one retry, no filter call
    (attempt,) = result.pairs
    assert attempt.status == "invalid" and attempt.question == ""
    assert attempt.reason.startswith("unusable reply after a retry: ")
    assert attempt.reason.endswith(f"raw output: {bad}")
    assert (attempt.round, attempt.prompt_version, attempt.backbone) == (
        1,
        "qa-v2",
        "openai:scripted",
    )
    assert not result.ready and result.stuck
    assert "single: 0/2 approved, 0 pending review (round 1 of 1)" in result.why_not


# -- checks -------------------------------------------------------------------------------


def test_good_pairs_pass_the_checks_and_wait_for_review(tmp_path, model):
    result = _generate(tmp_path, model, _generator(json.dumps(PAIRS)))
    assert [p.status for p in result.pairs] == ["pending", "pending"]
    assert all(p.paper_ids == ("2601.00001",) for p in result.pairs)
    assert not result.ready and not result.stuck  # reviewers can still make it ready


def test_evidence_that_is_not_in_the_paper_is_invalid(tmp_path, model):
    invented = [
        PAIRS[0],
        {**PAIRS[1], "evidence": [{"paper": 1, "quote": "KernelForge beats every baseline."}]},
    ]
    result = _generate(tmp_path, model, _generator(json.dumps(invented)))
    by_q = {p.question: p for p in result.pairs}
    assert by_q[PAIRS[0]["question"]].status == "pending"
    bad = by_q[PAIRS[1]["question"]]
    assert bad.status == "invalid"
    assert bad.reason.startswith("evidence quote not in the paper: 2601.00001")


def test_quotes_match_modulo_whitespace(tmp_path, model):
    reflowed = [
        {**PAIRS[0], "evidence": [{"paper": 1, "quote": "obtains a test\n  RMSE of 0.635"}]}
    ]
    result = _generate(tmp_path, model, _generator(json.dumps(reflowed)))
    assert [p.status for p in result.pairs] == ["pending"]


def test_filter_verdict_and_reason_are_kept(tmp_path, model):
    veto = json.dumps({"keep": False, "reason": "trivial: the answer is in the question"})
    result = _generate(tmp_path, model, _generator(json.dumps(PAIRS), veto))
    assert {(p.status, p.reason) for p in result.pairs} == {
        ("filtered", "trivial: the answer is in the question")
    }


def test_near_duplicate_questions_are_dropped(tmp_path, model):
    twins = [
        PAIRS[0],
        {**PAIRS[0], "question": "What test RMSE does KernelForge obtain on the Kin40k data?"},
    ]
    result = _generate(tmp_path, model, _generator(json.dumps(twins)))
    first, second = result.pairs
    assert first.status == "pending"
    assert second.status == "duplicate"
    assert second.reason == f"near-duplicate of: {PAIRS[0]['question']}"


def test_evidence_from_outside_the_sample_and_one_paper_cross_pairs():
    texts = {"a": "alpha beta gamma", "b": "delta epsilon"}
    assert evidence_problem([{"paper_id": "a", "quote": "beta  gamma"}], texts) == ""
    assert evidence_problem([{"paper_id": "z", "quote": "beta"}], texts) == (
        "evidence from a paper outside the sample: z"
    )
    assert cross_problem(("a", "a")).startswith("cross pair rests on one paper")
    assert cross_problem(("a", "b")) == ""
