"""Output budgets by purpose, replies cut at their budget, and structured replies, against
a loopback endpoint that cuts a reply at `max_tokens` words (`finish_reason` "length") as
a real server does, and with the offline engine, which answers the same protocol."""

from __future__ import annotations

import json
from collections.abc import Iterator
from dataclasses import replace

import pytest
from llm_server import PAIRS, PAPER, LLMServer, Model

from lilo.tasks.config import Settings
from lilo.tasks.embeddings import Embedder
from lilo.tasks.llm import make_client
from lilo.tasks.methods import Unit, get_method
from lilo.tasks.prompt_packs import lilo_pack
from lilo.tasks.qa import generate_qa
from lilo.tasks.qa.parse import QA_SCHEMA, VERDICT_SCHEMA
from lilo.tasks.qa.prompts import generate_messages
from lilo.tasks.records import Generation, PaperText, QAPair, Sample
from lilo.tasks.scoring import ScoreContext, get_scorer
from lilo.tasks.scoring.consistency import GRADE_SCHEMA

KEEP = json.dumps({"keep": True, "reason": "specific and answerable"})
REPLY = json.dumps({"pairs": PAIRS})
PAPER_TEXT = PaperText("2601.00001", "KernelForge", PAPER, 60, 80, "main.tex", "t", "s", "c")
SAMPLE = Sample("s1", "v1", ("2601.00001",), "Kernels", "2601.00000", 60, "command")


@pytest.fixture
def server() -> Iterator[LLMServer]:
    with LLMServer() as llm:
        llm.respond = lambda prompt, n: KEEP if "Decide whether" in prompt else REPLY
        yield llm


def _qa(tmp_path, server: LLMServer, **overrides: object):
    settings = server.settings(
        tmp_path,
        **{"qa.quota_single": 2, "qa.quota_cross": 0, "qa.max_rounds": 1, **overrides},
    )
    llm = make_client(settings)
    return generate_qa(
        SAMPLE,
        [PAPER_TEXT],
        settings.qa,
        settings.judge,
        llm,
        Embedder(settings.embedding, settings.data_dir),
    )


def test_qa_generation_and_filter_ask_their_own_budgets_and_schemas(tmp_path, server):
    result = _qa(tmp_path, server)
    assert result.ready
    generate, *filters = server.requests
    assert generate["max_tokens"] == 2048 and generate["response_format"] == QA_SCHEMA
    assert [f["max_tokens"] for f in filters] == [512, 512]
    assert all(f["response_format"] == VERDICT_SCHEMA for f in filters)


def test_a_budget_of_0_sends_no_max_tokens(tmp_path, server):
    _qa(tmp_path, server, **{"qa.generate_max_tokens": 0})
    assert "max_tokens" not in server.requests[0]


def test_a_reply_cut_at_its_budget_is_not_parsed_as_if_whole(tmp_path, server):
    """The JSON is whole, the reply is not: the model went on past it and was cut at its
    budget. It is `truncated`, asked again, and never read as a complete answer."""
    server.respond = lambda prompt, n: REPLY + " and more words follow" * 20
    budget = len(REPLY.split()) + 10
    result = _qa(tmp_path, server, **{"qa.generate_max_tokens": budget})
    (attempt,) = result.pairs
    assert attempt.status == "invalid"
    assert attempt.reason.startswith("unusable reply after a retry: truncated: ")
    assert "Your reply could not be used: truncated" in server.prompts[1][-1]["content"]
    assert len(server.requests) == 2  # the call and its retry, no filter


def test_an_endpoint_without_structured_output_gets_free_json(tmp_path, server):
    server.rejects_response_format = True
    result = _qa(tmp_path, server)
    assert result.ready
    rejected, free, *_ = server.requests
    assert rejected["response_format"] == QA_SCHEMA and "response_format" not in free
    assert rejected["messages"] == free["messages"]


def test_llama_cpp_python_gets_the_schema_in_the_form_it_takes(tmp_path, server):
    """Its server knows `json_object` with a schema, not `json_schema` (a 500 otherwise)."""
    server.model = Model(window=100_000, kind="llama-cpp-python")
    assert _qa(tmp_path, server).ready
    generate = server.requests[0]
    assert generate["response_format"] == {
        "type": "json_object",
        "schema": QA_SCHEMA["json_schema"]["schema"],
    }


def test_a_summary_cut_at_its_budget_is_marked(tmp_path, server, shared_embedder):
    server.respond = lambda prompt, n: "KernelForge reaches 0.635 on Kin40k. " * 50
    settings = server.settings(tmp_path, **{"generate.single_max_tokens": 40})
    method = get_method("single", settings.generate, settings.llm, settings.embedding)
    unit = Unit(SAMPLE, [PAPER_TEXT], 1000)
    generation = method.run(unit, make_client(settings), shared_embedder, lilo_pack())
    assert generation.error == "" and len(generation.text.split()) == 40
    assert generation.structure == {"truncated": ["write"]}


def test_the_planner_of_lilos_datasets_asks_its_own_budget(tmp_path, server, shared_embedder):
    server.respond = lambda prompt, n: "KernelForge reaches 0.635 on Kin40k."
    settings = server.settings(tmp_path)
    method = get_method("agentwrite", settings.generate, settings.llm, settings.embedding)
    unit = Unit(SAMPLE, [PAPER_TEXT], 1000)
    generation = method.run(unit, make_client(settings), shared_embedder, lilo_pack())
    assert generation.error == ""
    plan, *steps = server.requests
    assert plan["max_tokens"] == 4096 and [s["max_tokens"] for s in steps] == [8192]


def test_lilos_own_grade_asks_for_reason_and_score_through_structured_output(tmp_path):
    with LLMServer() as server:
        server.respond = lambda prompt, n: (
            '{"reason": "matches", "score": 1}' if "<gold>" in prompt else "It is 0.635."
        )
        settings = server.settings(tmp_path)
        generation = Generation(
            "g1", "s1", "single", {}, 1000, "openai:scripted", "KernelForge: RMSE 0.635.", 3
        )
        pair = QAPair(
            "q1", "s1", "single", ("p1",), "What RMSE?", "0.635", (), "approved", 1, "", "", "", ""
        )
        sample = Sample("s1", "v1", ("p1",), "Kernels", "", 40, "command")
        judge = make_client(settings)
        context = ScoreContext(generation, sample, [], [pair], judge, lilo_pack(), settings)
        scored = get_scorer("consistency")(context)
    answer, grade = server.requests
    assert answer["max_tokens"] == 256 and "response_format" not in answer
    assert grade["max_tokens"] == 512 and grade["response_format"] == GRADE_SCHEMA
    (row,) = [r for r in scored.rows if r.score == "consistency"]
    judged = row.detail["questions"][0]
    assert judged["grade_format"] == "structured" and judged["reason"] == "matches"


def test_the_offline_engine_answers_the_same_protocol(tmp_path):
    settings = Settings(data_dir=tmp_path).with_overrides({"llm.offline.processes": 0})
    llm = make_client(settings)
    messages = generate_messages("single", 2, "Kernels", [PAPER], [])
    whole = llm.complete(messages, purpose="qa_single", response_format=QA_SCHEMA)
    assert not whole.truncated and set(json.loads(whole.text)) == {"pairs"}
    cut = llm.complete(messages, purpose="qa_single", response_format=QA_SCHEMA, max_tokens=10)
    assert cut.truncated and cut.tokens_out == 10 and whole.text.startswith(cut.text)
    (_, call) = llm.take_calls()
    assert call.finish_reason == "length"


PLAN = "\n".join(f"Paragraph {i} - KernelForge, part {i}. Word count: 200 words" for i in range(5))


@pytest.mark.parametrize("name", ["agentwrite", "ral_writer"])
def test_a_plan_past_its_cap_writes_its_first_steps_and_says_how_many_it_had(
    tmp_path, server, name, shared_embedder
):
    """`generate.plan_steps_cap` bounds a weak model's plan of hundreds of lines; 0 (the
    default) and a benchmark's plans keep every step, as the reference."""
    server.respond = lambda prompt, n: PLAN if "numbered paragraph steps" in prompt else "Text."
    unit = Unit(SAMPLE, [PAPER_TEXT], 1000)

    def run(cap: int, benchmark: bool = False) -> Generation:
        pack = replace(lilo_pack(), benchmark=benchmark)
        server.requests.clear()
        settings = server.settings(tmp_path / f"{cap}{pack.benchmark}")
        settings = settings.with_overrides({"generate.plan_steps_cap": cap})
        generation = get_method(name, settings.generate, settings.llm, settings.embedding).run(
            unit, make_client(settings), shared_embedder, pack
        )
        assert generation.error == ""
        # recorded when set; 0 (every step) leaves the ids of earlier runs as they were
        assert generation.method_args.get("plan_steps_cap", 0) == cap
        assert ("plan_steps_cap" in generation.method_args) == (cap != 0)
        return generation

    capped = run(2)
    assert capped.plan == tuple(PLAN.splitlines()[:2]) and len(server.requests) == 1 + 2
    assert capped.structure == {"plan_capped": {"steps": 5, "kept": 2}}
    for whole in (run(0), run(2, benchmark=True)):
        assert len(whole.plan) == 5 and len(server.requests) == 1 + 5
        assert whole.structure == {}
