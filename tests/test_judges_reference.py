"""The judges on a published benchmark's pack follow its protocol (docs/reference.md): the
checklist prompt byte-identical to the reference's rendering (`json.dumps` with its
defaults, items exactly as published, the benchmark's system message), the QA answer
prompt with the appended sentence, and the QA grade through structured output holding only
the score, with the free-JSON prompt where the endpoint rejects `response_format`.

Templates and script strings here are written for these tests, in the benchmark's shape:
the real ones have no license and never enter this repository."""

from __future__ import annotations

import json

import jinja2
import pytest
from llm_server import LLMServer

from lilo.tasks.config_loading import load_settings
from lilo.tasks.llm import make_client
from lilo.tasks.prompt_packs import PromptPack, lilo_pack
from lilo.tasks.records import Generation, QAPair, Sample
from lilo.tasks.scoring import ScoreContext, get_scorer
from lilo.tasks.scoring.consistency import SCORE_SCHEMA
from lilo.tasks.scoring.quality import checklist_messages

CHECKLIST_TEMPLATE = (
    "Grade the survey.\n\nThe survey:\n{{ response }}\n\nIt has ended.\n\n"
    '"checklists": {{checklists}}\n\nThere are {num_checklist} items; reply with a list.'
)
# Dict metrics (in a key order that is not sorted), list metrics, non-ASCII text, a key
# beyond question/metrics: all shown to the judge as published.
CHECKLIST = """{
  "structure": [
    {"question": "Heading coverage（all five parts）?",
     "metrics": {"1": "All five", "0": "None", "0.5": "Three", "0.25": "One", "0.75": "Four"}},
    {"question": "Transitions — smooth? ", "note": "kept as published",
     "metrics": ["0: none", "0.25: few", "0.5: some", "0.75: most", "1: all"]}
  ],
  "data": [
    {"question": "Numbers reported with units, e.g. \\"3.5 GPU hours\\"?",
     "metrics": ["0: none", "0.25: few", "0.5: some", "0.75: most", "1: all"]}
  ]
}"""
SYSTEM = "You grade checklists (fixture system message)."
SUFFIX = "If the text does not say, answer 'unknown"
QA_ANSWER = (
    "Answer from the text.\n<paper>\n{{ paper }}\n</paper>\n<question>{{ question }}</question>"
)
QA_JUDGE = (
    "Grade.\n<question>{{ question }}</question>\n<gold>\n{{ answer }}\n</gold>\n"
    '<predict>\n{{ predict }}\n</predict>\nReply {"reason": "...", "score": "0.5"}.'
)


def _pack() -> PromptPack:
    assets = {
        "checklist": CHECKLIST_TEMPLATE,
        "checklist.json": CHECKLIST,
        "checklist_system": SYSTEM,
        "qa_answer": QA_ANSWER,
        "qa_judge": QA_JUDGE,
        "qa_answer_suffix": SUFFIX,
    }
    return PromptPack.from_assets("bench-v1", assets)


def _reference_rendering(aspect: str, response: str) -> str:
    """How the reference's quality script builds the prompt, written out independently."""
    items = json.loads(CHECKLIST)[aspect]
    checklists = [{"checklist_id": i, "checklist_content": q} for i, q in enumerate(items)]
    return jinja2.Template(CHECKLIST_TEMPLATE).render(
        checklists=json.dumps(checklists), response=response
    )


@pytest.mark.parametrize("aspect", ["structure", "data"])
def test_checklist_prompt_is_byte_identical_to_the_reference_rendering(aspect):
    pack = _pack()
    response = "# A survey\n\nIt compares — in tables — three methods (é, ü)."
    messages = checklist_messages(pack, "checklist", pack.checklist[aspect], response=response)
    expected = _reference_rendering(aspect, response)
    assert messages == [
        {"role": "system", "content": SYSTEM},
        {"role": "user", "content": expected},
    ]
    assert messages[1]["content"].encode() == expected.encode()
    if aspect == "structure":  # ASCII escapes and dict metrics as published
        assert "\\uff08" in expected and '"metrics": {"1": "All five", "0": "None"' in expected


def test_lilo_pack_keeps_its_own_system_message():
    pack = lilo_pack()
    aspect = next(iter(pack.checklist))
    system, _ = checklist_messages(pack, "checklist", pack.checklist[aspect], response="x")
    assert system["role"] == "system" and "careful evaluator" in system["content"]
    assert not pack.benchmark and _pack().benchmark


def _records() -> tuple[Generation, Sample, QAPair]:
    sample = Sample("s1", "bench-v1", ("p1",), "Kernels", "", 40, "command")
    generation = Generation(
        "g1", "s1", "single", {}, 1000, "openai:scripted", "KernelForge: RMSE 0.635.", 3
    )
    pair = QAPair(
        "q1", "s1", "single", ("p1",), "What RMSE?", "0.635", (), "approved", 1, "", "", "", ""
    )
    return generation, sample, pair


def _grade(tmp_path, server: LLMServer, judge: dict | None = None) -> dict:
    settings = server.settings(tmp_path).with_overrides({"judge": judge or {}})
    judge = make_client(settings)
    generation, sample, pair = _records()
    context = ScoreContext(generation, sample, [], [pair], judge, _pack(), settings)
    scored = get_scorer("consistency")(context)
    (row,) = [r for r in scored.rows if r.score == "consistency"]
    return row.detail["questions"][0]


def test_qa_grade_asks_for_the_score_through_structured_output(tmp_path):
    with LLMServer() as server:
        server.respond = lambda prompt, n: (
            '{"score": 0.75}' if prompt.startswith("Grade.") else "It is 0.635."
        )
        judged = _grade(tmp_path, server)
    answer, grade = server.requests
    assert answer["messages"][0]["content"].endswith("</question>" + SUFFIX)
    assert "response_format" not in answer
    assert grade["response_format"] == SCORE_SCHEMA
    schema = grade["response_format"]["json_schema"]["schema"]
    assert list(schema["properties"]) == ["score"] and schema["additionalProperties"] is False
    assert judged["score"] == 0.75 and judged["grade_format"] == "structured"


def test_the_paper_profile_sends_the_judge_no_output_limit_as_the_reference(tmp_path):
    """The reference's scripts send the QA answer and grade (and the checklist) without
    max_tokens; the paper profile does the same, lilo's default bounds each."""
    paper = load_settings(overrides={"profile": "paper"}).judge
    limits = ("answer", "grade", "checklist", "winrate")
    values = {f"{n}_max_tokens": getattr(paper, f"{n}_max_tokens") for n in limits}
    assert set(values.values()) == {0}
    with LLMServer() as server:
        server.respond = lambda prompt, n: (
            '{"score": 1}' if prompt.startswith("Grade.") else "It is 0.635."
        )
        _grade(tmp_path / "default", server)
        bounded = [r.get("max_tokens") for r in server.requests]
        _grade(tmp_path / "paper", server, values)
        unbounded = [r.get("max_tokens") for r in server.requests[len(bounded) :]]
    assert bounded == [256, 512] and unbounded == [None, None]


def test_qa_grade_falls_back_to_free_json_where_response_format_is_rejected(tmp_path):
    with LLMServer() as server:
        server.rejects_response_format = True
        server.respond = lambda prompt, n: (
            '{"reason": "matches the gold answer", "score": "1"}'
            if prompt.startswith("Grade.")
            else "It is 0.635."
        )
        judged = _grade(tmp_path, server)
    answer, rejected, free = server.requests
    assert rejected["response_format"] == SCORE_SCHEMA
    assert "response_format" not in free and free["messages"] == rejected["messages"]
    assert judged["score"] == 1.0 and judged["reason"] == "matches the gold answer"
    assert judged["grade_format"] == "free_json (structured output rejected)"


def test_response_format_is_part_of_the_cache_key(tmp_path):
    with LLMServer() as server:
        server.respond = lambda prompt, n: '{"score": 0.5}'
        llm = make_client(server.settings(tmp_path))
        messages = [{"role": "user", "content": "Grade."}]
        llm.chat(messages, purpose="t")
        llm.chat(messages, purpose="t", response_format=SCORE_SCHEMA)
        llm.chat(messages, purpose="t", response_format=SCORE_SCHEMA)
    assert len(server.requests) == 2  # the third is the second's, from the cache


def test_offline_engine_answers_the_score_schema_with_the_score_only(tmp_path):
    from lilo.tasks.config import Settings

    settings = Settings(data_dir=tmp_path).with_overrides({"llm.offline.processes": 0})
    llm = make_client(settings)
    prompt = QA_JUDGE.replace("{{ question }}", "What RMSE?")
    prompt = prompt.replace("{{ answer }}", "0.635").replace("{{ predict }}", "RMSE 0.635")
    messages = [{"role": "user", "content": prompt}]
    free = json.loads(llm.chat(messages, purpose="t", temperature=0.0))
    structured = json.loads(
        llm.chat(messages, purpose="t", temperature=0.0, response_format=SCORE_SCHEMA)
    )
    assert set(free) == {"reason", "score"}
    assert structured == {"score": free["score"]}
