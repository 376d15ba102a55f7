"""Context windows against loopback servers that behave as vLLM, llama-server,
llama-cpp-python's server, Ollama and OpenAI do (tests/llm_server.py `Model`): the window
taken from the server, from `llm.context_window`, or learned from the server's own 400 and
kept for the next process as a hint (tested once per process, dropped when the server's
identity changes, forgotten by `lilo failures --forget-windows`); queued requests fitted to
the window a rejection taught while they waited; budgets fitted to it; a prompt that
cannot fit failed as `context_exceeded` without a call; concurrency narrowed to the
server's slots; a timed-out request not sent twice; the ledger equal to what the server
received and answered."""

from __future__ import annotations

import json
import subprocess
import sys
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest
from llm_server import LLMServer, Model, prompt_tokens, serve_in_background

from lilo.flows.cli import main
from lilo.flows.cli._errors import CLIError
from lilo.tasks.embeddings import Embedder
from lilo.tasks.llm import ContextExceeded, LLMError, make_client
from lilo.tasks.llm.ledger import CallLog, LedgerReader
from lilo.tasks.llm.starting import started_on_first_use
from lilo.tasks.llm.window import ESTIMATE_BYTES, MARGIN_TOKENS, estimate_tokens
from lilo.tasks.methods import Unit, get_method
from lilo.tasks.prompt_packs import lilo_pack
from lilo.tasks.records import PaperText, Sample
from lilo.tasks.tokens import count_gpt4o_tokens

WORDS = "kernel process gaussian learning inference posterior variance prior".split()


def _prompt(words: int, salt: str = "") -> list[dict[str, str]]:
    text = " ".join(WORDS[i % len(WORDS)] + salt for i in range(words))
    return [{"role": "user", "content": text}]


@pytest.fixture
def server() -> Iterator[LLMServer]:
    with LLMServer() as llm:
        llm.respond = lambda prompt, n: "A short reply."
        yield llm


def _client(tmp_path: Path, server: LLMServer, **overrides: object):
    return make_client(server.settings(tmp_path, **overrides))


def _sent(server: LLMServer) -> list[dict]:
    return [r for r in server.requests if r["path"] == "/v1/chat/completions"]


def test_a_prompt_that_cannot_fit_the_window_vllm_names_is_failed_without_a_call(tmp_path, server):
    server.model = Model(window=500, kind="vllm")
    llm = _client(tmp_path, server)
    with pytest.raises(ContextExceeded) as failed:
        llm.chat(_prompt(600), purpose="generate:single", max_tokens=32_768)
    assert "context_exceeded: prompt 604 tokens, window 500 (server)" in str(failed.value)
    assert _sent(server) == []  # counted by the server's /tokenize, never sent
    assert "GET /v1/models" in server.asked and "POST /tokenize" in server.asked


def test_a_prompt_that_fits_is_sent_with_the_budget_the_window_leaves(tmp_path, server):
    """Single asks 32,768 output tokens, as the reference does; a 2,000-token window
    leaves 2,000 - prompt - margin of them, and the server answers instead of a 400."""
    server.model = Model(window=2000, kind="vllm")
    llm = _client(tmp_path, server)
    messages = _prompt(300)
    assert llm.chat(messages, purpose="generate:single", max_tokens=32_768) == "A short reply."
    (sent,) = _sent(server)
    assert sent["max_tokens"] == 2000 - prompt_tokens(messages) - MARGIN_TOKENS
    # The key holds what was asked: the same call again is a cache hit, nothing sent.
    llm.chat(messages, purpose="generate:single", max_tokens=32_768)
    assert len(_sent(server)) == 1
    first, again = llm.take_calls()
    assert json.loads(first.request)["max_tokens"] == 32_768 and again.cached


def test_fit_max_tokens_off_sends_the_request_as_asked(tmp_path, server):
    server.model = Model(window=2000, kind="vllm")
    llm = _client(tmp_path, server, **{"llm.fit_max_tokens": False})
    with pytest.raises(LLMError, match="maximum context length is 2000 tokens"):
        llm.chat(_prompt(300), purpose="generate:single", max_tokens=32_768)
    assert [r["max_tokens"] for r in _sent(server)] == [32_768]


def test_a_rejection_teaches_the_window_and_the_request_goes_again_fitted(tmp_path, server):
    """An endpoint that names nothing (OpenAI): its 400 says the window and the prompt's
    tokens; the request goes once more with the budget they leave, and a later prompt is
    fitted at once (estimated) without another 400."""
    server.model = Model(window=3000, kind="openai")
    log = CallLog(tmp_path / "runs" / "r" / "generate.jsonl")
    llm = make_client(server.settings(tmp_path), log)
    messages = _prompt(400)
    assert llm.chat(messages, purpose="generate:single", max_tokens=32_768) == "A short reply."
    rejected, fitted = _sent(server)
    assert rejected["max_tokens"] == 32_768
    assert fitted["max_tokens"] == 3000 - prompt_tokens(messages) - MARGIN_TOKENS
    llm.chat(_prompt(400, "s"), purpose="generate:single", max_tokens=32_768)
    later = _sent(server)[2]
    estimate = estimate_tokens(_prompt(400, "s"))
    assert later["max_tokens"] == 3000 - estimate - MARGIN_TOKENS
    # The ledger counts every request the server received: the rejected one unanswered.
    rows = LedgerReader(log.path, "generate").read(final=True)
    assert rows.made == len(_sent(server)) == 3
    assert len(rows.unanswered) == 1
    assert rows.tokens_in == server.usage["prompt_tokens"]
    assert rows.tokens_out == server.usage["completion_tokens"]


_RERUN = """
import sys
from lilo.tasks.config import Settings
from lilo.tasks.llm import ContextExceeded, make_client
llm = {{"backend": "openai", "model": "scripted", "api_key": "sk-test", "retries": 0,
        "base_url": "{base_url}"}}
client = make_client(Settings(data_dir=sys.argv[1]).with_overrides({{"llm": llm}}))
for words in {prompts}:
    try:
        print(client.chat([{{"role": "user", "content": words}}], purpose="again", max_tokens=9))
    except ContextExceeded as exc:
        print(exc)
"""


def _rerun(tmp_path: Path, server: LLMServer, *prompts: list[dict[str, str]]) -> str:
    """What a new lilo process prints for `prompts` sent to `server` with `tmp_path`'s cache."""
    code = _RERUN.format(
        base_url=server.base_url, prompts=json.dumps([p[0]["content"] for p in prompts])
    )
    done = subprocess.run(
        [sys.executable, "-c", code, str(tmp_path)], capture_output=True, text=True, timeout=120
    )
    assert done.returncode == 0, done.stderr
    return done.stdout


@pytest.mark.e2e  # the next lilo processes, subprocesses
@pytest.mark.slow
def test_the_learned_window_is_a_hint_tested_once_by_the_next_process(tmp_path, server):
    """llama-cpp-python's server names no window: its first rejection teaches it, and the
    same process fails a later prompt without sending it. A new process sends one prompt
    past the learned window, once: refused again, the window is learned again and its
    other prompts fail without a call, naming where the window is kept and how to forget
    it; after a restart with a larger window (the server says nothing that tells), the one
    prompt sent is answered and the learned window forgotten (it said "window 4096
    (learned)" for ever). A prompt it refuses is sent twice: streamed (the server starts
    its reply and the stream dies unsaid), then unstreamed (its 400 names the window)."""
    server.model = Model(window=500, kind="llama-cpp-python")
    llm = _client(tmp_path, server)
    with pytest.raises(ContextExceeded, match="prompt 604 tokens, window 500"):
        llm.chat(_prompt(600), purpose="generate:single", max_tokens=32_768)
    assert [r.get("stream") for r in _sent(server)] == [True, None]  # the one rejected
    with pytest.raises(ContextExceeded, match="window 500 \\(learned\\)"):
        llm.chat(_prompt(600, "s"), purpose="generate:single", max_tokens=100)
    assert len(_sent(server)) == 2
    (kept,) = (tmp_path / "cache" / "llm").glob("??/*.window.json")
    said = _rerun(tmp_path, server, _prompt(600), _prompt(600, "t")).splitlines()
    assert len(_sent(server)) == 4  # the first prompt, sent again once (twice: streamed)
    for line in said:  # the first refused by the server, the second without a call
        assert "context_exceeded: prompt 60" in line and line.endswith(
            f"tokens, window 500 (learned): from the server's rejection, kept in {kept} "
            "(`lilo failures --forget-windows` forgets it)"
        )
    server.model = Model(window=5000, kind="llama-cpp-python")  # restarted, --n_ctx 5000
    said = _rerun(tmp_path, server, _prompt(600), _prompt(600, "t"))
    assert said.splitlines() == ["A short reply.", "A short reply."]
    assert len(_sent(server)) == 6 and not kept.exists()


def test_queued_requests_see_the_window_one_rejection_taught(tmp_path, server):
    """llama-cpp-python's server names no window and computes one request at a time: of
    6 prompts that cannot fit, sent at once, only the first reaches it (4 did, as 400s,
    when the size was checked before a request waited for the server's slot): streamed,
    then unstreamed once its stream died."""
    server.model = Model(window=500, kind="llama-cpp-python")
    server.compute_s = 0.1
    llm = _client(tmp_path, server, **{"llm.concurrency": 6})

    def ask(n: int) -> str:
        try:
            return llm.chat(_prompt(600, str(n)), purpose="t", max_tokens=100)
        except ContextExceeded as exc:
            return str(exc)

    with ThreadPoolExecutor(6) as pool:
        said = list(pool.map(ask, range(6)))
    first, again = _sent(server)
    assert first["messages"] == again["messages"] and again.get("stream") is None
    # Each says where the learned window is kept and how to forget it.
    forget = "(learned): from the server's rejection, kept in"
    assert all("window 500 " + forget in s and "--forget-windows" in s for s in said), said


def test_a_restarted_server_is_asked_again(tmp_path, server):
    """A window learned from a server is not used once the server's identity changes (here
    the date it lists its model with: another start): the prompt is sent, and answered."""
    weights = {"llm.weights": "model.gguf:1"}  # one GGUF served on two ports, one cache
    server.model = Model(window=500, kind="llama-cpp-python", created=1)
    with pytest.raises(ContextExceeded, match="window 500"):
        _client(tmp_path, server, **weights).chat(_prompt(600), purpose="t", max_tokens=9)
    with LLMServer() as restarted:
        restarted.respond = lambda prompt, n: "A short reply."
        restarted.model = Model(window=5000, kind="llama-cpp-python", created=2)
        llm = _client(tmp_path, restarted, **weights)
        assert llm.chat(_prompt(600), purpose="t", max_tokens=9) == "A short reply."
        assert len(_sent(restarted)) == 1


def test_forget_windows_removes_only_the_windows_lilo_learned(tmp_path, server, capsys):
    server.model = Model(window=500, kind="llama-cpp-python")
    with pytest.raises(ContextExceeded):
        _client(tmp_path, server).chat(_prompt(600), purpose="t", max_tokens=9)
    _client(tmp_path, server).chat(_prompt(5), purpose="t", max_tokens=9)
    cache = tmp_path / "cache" / "llm"
    (learned,) = cache.glob("??/*.window.json")
    other = learned.parent / "notes.window.json"  # a file lilo did not write
    other.write_text('{"window": "mine"}')
    kept = {p for p in cache.rglob("*") if p.is_file()} - {learned}
    assert main(["failures", "--forget-windows", "--data-dir", str(tmp_path)]) == 0
    out = capsys.readouterr().out
    assert out.splitlines() == [
        f"forgot {learned}",
        "1 learned context window forgotten: the next run sends their prompts to the servers again",
    ]
    assert {p for p in cache.rglob("*") if p.is_file()} == kept
    assert any(p.name.endswith(".tokens.json") for p in kept)  # counts stay: still true


def test_llama_server_rejection_fields_teach_the_window(tmp_path, server):
    server.model = Model(window=500, kind="llama.cpp", says=False)
    llm = _client(tmp_path, server)
    with pytest.raises(ContextExceeded, match="prompt 604 tokens, window 500"):
        llm.chat(_prompt(600), purpose="t", max_tokens=100)
    assert len(_sent(server)) == 1


@pytest.mark.parametrize("kind", ["llama.cpp", "ollama"])
def test_llama_server_and_ollama_name_their_window(tmp_path, server, kind):
    server.model = Model(window=500, kind=kind)
    llm = _client(tmp_path, server)
    with pytest.raises(ContextExceeded, match="window 500 \\(server\\)"):
        llm.chat(_prompt(600), purpose="t", max_tokens=100)
    assert _sent(server) == []


def test_the_setting_names_a_window_the_server_does_not(tmp_path, server):
    """No tokenizer either (OpenAI): the prompt is estimated, the estimate said so."""
    llm = _client(tmp_path, server, **{"llm.context_window": 500})
    with pytest.raises(ContextExceeded, match=r"tokens \(estimated\), window 500 \(setting\)"):
        llm.chat(_prompt(600), purpose="t", max_tokens=100)
    assert _sent(server) == []


def test_the_estimate_overcounts_the_corpus_for_gpt4o():
    """`ESTIMATE_BYTES` is conservative: on the vendored corpus's LaTeX sources it counts
    more tokens than GPT-4o's tokenizer does (o200k_base)."""
    corpus = Path(__file__).parent / "corpus" / "papers"
    for folder in sorted(corpus.iterdir())[:5]:
        text = "\n".join(p.read_text(errors="replace") for p in sorted(folder.rglob("*.tex")))
        estimate = len(text.encode()) / ESTIMATE_BYTES
        assert estimate > count_gpt4o_tokens(text), folder.name


@pytest.mark.parametrize("kind", ["llama.cpp", "llama-cpp-python"])
def test_requests_in_flight_narrow_to_what_the_server_computes_at_once(tmp_path, server, kind):
    """llama-server names its slots; llama-cpp-python's server computes one at a time."""
    server.model = Model(window=100_000, kind=kind, slots=1)
    server.compute_s = 0.2
    llm = _client(tmp_path, server, **{"llm.concurrency": 4})
    with ThreadPoolExecutor(4) as pool:
        list(pool.map(lambda n: llm.chat(_prompt(5, str(n)), purpose="t"), range(4)))
    assert len(_sent(server)) == 4 and server.peak == 1


def test_llama_server_s_window_is_one_slot_s_share_of_its_context(tmp_path, server):
    """`llama-server -np 2 -c 8192` names 4,096 tokens in `/props` (and in `/v1/models`, beside
    the model's trained 32,768): a request can use one slot's share. lilo fits budgets to it
    and, with its default concurrency (4), keeps the 2 slots busy and no more."""
    server.model = Model(window=4096, kind="llama.cpp", slots=2)
    server.compute_s = 0.2
    llm = _client(tmp_path, server)
    prompts = [_prompt(3000, str(n)) for n in range(4)]
    with ThreadPoolExecutor(4) as pool:
        list(pool.map(lambda m: llm.chat(m, purpose="t", max_tokens=8192), prompts))
    room = 4096 - llm.window.prompt_tokens(prompts[0])[0] - MARGIN_TOKENS  # as /tokenize counts
    assert [r["max_tokens"] for r in _sent(server)] == [room] * 4 and server.peak == 2
    with pytest.raises(ContextExceeded, match="window 4096 \\(server\\)"):
        llm.chat(_prompt(4100), purpose="t", max_tokens=100)
    assert len(_sent(server)) == 4


def test_a_request_that_timed_out_is_not_sent_again(tmp_path, server):
    """The server may still be computing it: another copy would be computed twice."""
    server.compute_s = 1.5
    llm = _client(tmp_path, server, **{"llm.timeout_s": 0.3, "llm.retries": 2})
    with pytest.raises(LLMError, match="timed out"):
        llm.chat(_prompt(5), purpose="t")
    assert len(_sent(server)) == 1


def _papers() -> list[PaperText]:
    papers = []
    for n in range(1, 4):
        text = " ".join(f"{WORDS[i % len(WORDS)]}{n}x{i % 37}" for i in range(400))
        papers.append(
            PaperText(f"2601.0000{n}", f"P{n}", text, 400, 0, "main.tex", "t", "s", f"c{n}")
        )
    return papers


def _ral_writer(tmp_path: Path, window: int, embedder: Embedder) -> tuple[list[dict], dict]:
    """RAL-Writer's last writer request and its restatement record, on a vLLM server of
    `window` tokens (a server of its own: a process asks a server about itself once)."""
    with LLMServer() as server:
        # A one-step plan about the papers' words: the chunks it restates are theirs.
        server.respond = lambda prompt, n: " ".join(f"{w}2x{i}" for i, w in enumerate(WORDS))
        server.model = Model(window=window, kind="vllm")
        settings = server.settings(
            tmp_path / str(window),
            **{
                "generate.ral.k": 6,
                "generate.ral.chunk_words": 50,
                "generate.ral.overlap_words": 0,
                "generate.step_max_tokens": 300,
            },
        )
        papers = _papers()
        sample = Sample("s1", "v1", tuple(p.paper_id for p in papers), "T", "s", 1200, "command")
        method = get_method("ral_writer", settings.generate, settings.llm, settings.embedding)
        unit = Unit(sample, papers, 400)
        generation = method.run(unit, make_client(settings), embedder, lilo_pack())
        assert generation.error == "", generation.error
        return _sent(server)[-1], generation.restated[-1]


def test_ral_writer_lowers_k_to_the_window(tmp_path, shared_embedder):
    """RAL-Writer's reduce-k fallback follows the endpoint's window, not only its
    110,000-token limit: the writer prompt with its whole budget fits the window."""
    wide, at_k = _ral_writer(tmp_path, 100_000, shared_embedder)
    assert at_k["k"] == 6
    full = prompt_tokens(wide["messages"])
    window = full + 300 + MARGIN_TOKENS - 120  # about two chunks too many
    narrow, lowered = _ral_writer(tmp_path, window, shared_embedder)
    assert 0 < lowered["k"] < 6
    assert prompt_tokens(narrow["messages"]) + 300 + MARGIN_TOKENS <= window
    assert narrow["max_tokens"] == 300


def test_a_server_lilo_starts_is_started_by_the_first_request_not_in_the_cache(tmp_path):
    """`--local-model` starts llama.cpp when a request first needs it (tasks/llm/starting.py):
    a rerun whose replies, and whose planning (`fits`), are all in the cache starts none and
    asks it nothing. Here the servers are loopback ones that answer once started."""
    weights = {"llm.weights": "model.gguf:1", "llm.context_window": 4096}  # one GGUF
    messages = _prompt(50)
    for run in ("first", "rerun"):
        server, started = LLMServer(), []
        server.respond = lambda prompt, n: "A short reply."
        server.model = Model(window=4096, kind="llama-cpp-python")

        def start(server: LLMServer = server, started: list[str] = started, run: str = run) -> None:
            started.append(run)
            serve_in_background(server)

        try:
            with started_on_first_use(server.base_url, start):
                llm = _client(tmp_path, server, **weights)
                assert llm.fits(messages, 100)
                assert llm.chat(messages, purpose="t", max_tokens=100) == "A short reply."
        finally:
            if started:
                server.shutdown()
            server.server_close()
        if run == "first":
            assert started == ["first"] and len(_sent(server)) == 1
        else:
            assert started == [] and server.asked == [] and server.requests == []


def test_a_server_lilo_could_not_start_fails_each_call_naming_why(tmp_path, server):
    """Each call fails as an LLMError (recorded, retried by the next run), none is sent."""
    tries = []

    def start() -> None:
        tries.append(1)
        raise CLIError("the local model server exited with code 1: its output is in x.tmp", 1)

    with started_on_first_use(server.base_url, start):
        llm = _client(tmp_path, server)
        for n in range(2):
            with pytest.raises(LLMError, match="exited with code 1: its output is in x.tmp"):
                llm.chat(_prompt(5, str(n)), purpose="t")
    assert len(tries) == 2 and server.asked == [] and server.requests == []
