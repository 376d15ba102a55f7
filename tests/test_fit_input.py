"""`generate.fit_input`: the imported benchmark's samples (tests/test_import_benchmark.py's
fixture) on a loopback server whose window is under half a sample's papers
(tests/llm_server.py `Model`): off, Single fails `context_exceeded` as the reference's
request does; truncate, every method writes its summary from papers cut to the window and
records what was left out. And lilo's own planner and writers open with the same text, so a
prefix-caching server reads the papers once per summary."""

from __future__ import annotations

import os
from dataclasses import replace
from pathlib import Path

import pytest
from llm_server import LLMServer, Model, kernel_samples, prompt_tokens, seed_samples
from test_import_benchmark import write_benchmark

from lilo.flows.generate import generate_flow
from lilo.tasks.benchmark import header_stripped, read_longinoutbench
from lilo.tasks.embeddings import Embedder
from lilo.tasks.llm import make_client
from lilo.tasks.llm.window import MARGIN_TOKENS
from lilo.tasks.methods import Unit, get_method
from lilo.tasks.methods._fit import cut_text
from lilo.tasks.methods._prompts import task_instruction
from lilo.tasks.prompt_packs import PromptPack, lilo_pack
from lilo.tasks.records import PaperText, Sample
from lilo.tasks.report_records import SummaryDetail
from lilo.tasks.results_report._html import cell_rows
from lilo.warehouse import Warehouse

METHODS = ("single", "agentwrite", "compress[extractive]", "ral_writer")
WINDOW = 3000  # fake tokens (words): a sample's instruction is about 7,700
SMALL = {
    "generate.single_max_tokens": 300,
    "generate.step_max_tokens": 200,
    "generate.ral.chunk_words": 256,
    "generate.ral.overlap_words": 64,
}


@pytest.fixture(scope="module")
def benchmark(tmp_path_factory) -> tuple[list[PaperText], PromptPack]:
    """The fixture's first sample's papers (as the import stores them) and its prompts."""
    bench = read_longinoutbench(write_benchmark(tmp_path_factory.mktemp("clone")), "lib")
    papers = {p.paper_id: header_stripped(p) for p in bench.papers}
    pack = PromptPack.from_assets("lib", {a.name: a.content for a in bench.assets})
    return [papers[i] for i in bench.groups[0].paper_ids], pack


def _reply(prompt: str, n: int) -> str:
    if "Split the task" in prompt or "numbered paragraph steps" in prompt:  # the planners
        return "Paragraph 1 - the field - 200 words\nParagraph 2 - the results - 200 words"
    return "A short paragraph about the papers."


def _run(server: LLMServer, data: Path, papers, pack, fit: str, methods=METHODS) -> dict:
    embedding = {"embedding.backend": "openai", "embedding.base_url": server.base_url}
    embedding |= {"embedding.api_key": "sk-test", "embedding.model": "bag"}
    settings = server.settings(data, **embedding, **SMALL, **{"generate.fit_input": fit})
    sample = Sample("s1", "lib", tuple(p.paper_id for p in papers), "T", "s", 1, "command")
    embedder = Embedder(settings.embedding, settings.data_dir)
    done = {}
    for name in methods:
        method = get_method(name, settings.generate, settings.llm, settings.embedding)
        done[name] = method.run(Unit(sample, papers, 400), make_client(settings), embedder, pack)
    return done


def _chats(server: LLMServer) -> list[dict]:
    return [r for r in server.requests if r["path"] == "/v1/chat/completions"]


def test_off_single_exceeds_the_window_and_truncate_fits_every_method(tmp_path, benchmark):
    papers, pack = benchmark
    with LLMServer() as server:
        server.respond = _reply
        server.model = Model(window=WINDOW, kind="vllm")
        off = _run(server, tmp_path / "off", papers, pack, "off", ("single",))["single"]
        assert "context_exceeded" in off.error and not _chats(server)
        assert "fit_input" not in off.method_args and "fit_input" not in off.structure

        fitted = _run(server, tmp_path / "on", papers, pack, "truncate")
        sent = _chats(server)
    for name, g in fitted.items():
        assert g.error == "" and g.text, (name, g.error)
        assert g.method_args["fit_input"] == "truncate"
        left_out = g.structure["fit_input"]
        assert left_out["tokens_left_out"] > 0 and left_out["words_left_out"] > 0, name
        assert left_out["window"] == WINDOW and left_out["prompts_cut"] >= 1
    assert fitted["single"].generation_id != off.generation_id
    # every request fits the window with its budget; RAL-Writer still restates chunks
    assert all(
        prompt_tokens(r["messages"]) + r["max_tokens"] + MARGIN_TOKENS <= WINDOW for r in sent
    )
    assert all(r["k"] > 0 for r in fitted["ral_writer"].restated)
    # each paper keeps its opening, cut at a sentence or paragraph end
    single = next(r for r in sent if "Split the task" not in r["messages"][0]["content"])
    prompt = single["messages"][0]["content"]
    for paper in papers:
        assert paper.text[:200] in prompt and paper.text not in prompt


def test_a_prompt_that_fits_records_nothing_left_out(tmp_path, benchmark):
    papers, pack = benchmark
    with LLMServer() as server:
        server.respond = _reply
        server.model = Model(window=100_000, kind="vllm")
        single = _run(server, tmp_path, papers, pack, "truncate", ("single",))["single"]
        prompt = _chats(server)[0]["messages"][0]["content"]
    assert single.structure["fit_input"] == {
        "tokens_left_out": 0,
        "words_left_out": 0,
        "prompts_cut": 0,
        "window": 100_000,
    }
    assert prompt == task_instruction(pack, [p.text for p in papers], 400)


def test_cuts_end_at_a_paragraph_or_a_sentence():
    text = "One two three. Four five six.\n\nSeven eight nine. Ten eleven twelve."
    assert cut_text(text, 60) == "One two three. Four five six.\n\nSeven eight nine."
    assert cut_text(text, 45) == "One two three. Four five six."
    assert cut_text(text, 25) == "One two three."
    assert cut_text(text, 8) == "One two"
    assert cut_text(text, 500) == text


def test_a_window_unknown_cuts_nothing_and_the_run_says_so_once(tmp_path, prefect_harness):
    with LLMServer() as server:  # an OpenAI-like server: it names no window
        server.respond = _reply
        settings = server.settings(
            tmp_path,
            **{"generate.methods": ["single", "agentwrite"], "generate.target_words": [200]},
            **{"generate.fit_input": "truncate", "qa.quota_single": 0, "qa.quota_cross": 0},
        )
        seed_samples(settings, kernel_samples(2))
        report = generate_flow(settings, "r1")
    said = [n for n in report.notes if "window is unknown" in n]
    assert len(said) == 1 and said[0].startswith("generate.fit_input=truncate")
    with Warehouse(settings.db_path) as wh:
        rows = wh.rows("SELECT error, structure FROM fct_generations")
    assert len(rows) == 4 and all(r["error"] == "" for r in rows)
    assert all('"tokens_left_out": 0' in str(r["structure"]) for r in rows)


def test_lilo_prompts_of_one_summary_open_with_the_papers(tmp_path):
    """lilo's planner and writers (AgentWrite's, RAL-Writer's) open with the task and its
    papers: every prompt of one summary shares them as its prefix."""
    papers = [
        PaperText(f"2601.0000{n}", f"P{n}", " ".join(f"w{n}x{i}." for i in range(300)), 300, 0,
                  "main.tex", "t", "s", f"c{n}")
        for n in range(1, 4)
    ]  # fmt: skip
    sample = Sample("s1", "v1", tuple(p.paper_id for p in papers), "T", "s", 900, "command")
    for name in ("agentwrite", "ral_writer"):
        with LLMServer() as server:
            server.respond = _reply
            settings = server.settings(
                tmp_path / name,
                **{"embedding.backend": "openai", "embedding.base_url": server.base_url},
                **{"embedding.api_key": "sk-test", "embedding.model": "bag"},
                **{"generate.ral.chunk_words": 100, "generate.ral.overlap_words": 0},
            )
            method = get_method(name, settings.generate, settings.llm, settings.embedding)
            embedder = Embedder(settings.embedding, settings.data_dir)
            g = method.run(Unit(sample, papers, 400), make_client(settings), embedder, lilo_pack())
            prompts = [r["messages"][0]["content"] for r in _chats(server)]
        assert g.error == "" and len(prompts) == 3  # the plan and two steps
        shared = os.path.commonprefix(prompts)
        assert len(shared) >= sum(len(p.text) for p in papers)
        assert all(p.text in shared for p in papers), name


def test_a_cell_page_shows_the_tokens_left_out_where_the_input_was_fitted():
    scores = {"length": 90.0, "consistency": None, "quality": None}
    fitted = SummaryDetail("g1", "s1", "single", 400, "b", 10, "t", scores, (), {}, left_out=5)
    plain = replace(fitted, left_out=None)
    assert cell_rows([fitted, plain])["tokens left out"].tolist()[:1] == [5]
    assert "tokens left out" not in cell_rows([plain]).columns
