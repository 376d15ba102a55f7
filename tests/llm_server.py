"""A loopback OpenAI-compatible endpoint for tests: /v1/chat/completions, /v1/completions
and /v1/embeddings. It records each request and answers queued failure statuses first; then a
chat gets the scripted `respond(prompt, n)` (the last message's content and the number of
messages; an echo by default), a completion `respond(prompt, 0)` (its `prompt` text), cut
before the first of its `stop` sequences, and an embedding request gets `bag_of_words(text)`
per input, unnormalised and listed last input first (the API orders by `index`, not by
position).
`PAPER` and `PAIRS` are a paper and the QA pairs a scripted model generates from it.

A scripted reply that is a `Refusal` is an error: its status, its message in the error body
OpenAI's API sends.

`Faults` makes it a misbehaving endpoint: a share of chat requests gets one of `FAULTS`
(429 with Retry-After, 500, 503, a stall past the client's timeout, a dropped connection,
JSON cut short, empty content, an HTML page; and, when named in `kinds`, `key_echo`: the 400
OpenAI sends for a wrong key, the request's Authorization header in its message), chosen by a
seeded hash of the request and how many times that same request came before, so a run's
faults do not depend on the order its threads send them. `answered` counts the chat
requests answered with a completion. A request's `response_format` (structured output) is
recorded with it; with `rejects_response_format` set the server refuses it with a 400, as
endpoints without structured output do.

`Model` makes it a server with a context window, which it names or not as `kind` does:
vLLM (`GET /v1/models` max_model_len, `POST /tokenize` of the messages), llama-server
(`GET /props` n_ctx and total_slots, `POST /tokenize` of a text; its window is one slot's, as
`llama-server -np 2 -c 8192` names 4,096, and its `/v1/models` names it beside the model's
trained context, `N_CTX_TRAIN`), llama-cpp-python's server
(`POST /extras/tokenize/count`, no window said), Ollama (`POST /api/show`) or OpenAI
(nothing said); with `says` off it names no window, with `created` it dates the model in
`/v1/models` (a restarted server's identity changes with it). llama-server's `/props` names
`chat_template` where the model's is set. A token is a whitespace-separated
word, and each message adds 4 (its template). A prompt past the window gets the 400 that
kind of server answers ("maximum context length is N tokens", or llama-server's
`exceed_context_size_error`), except a streamed one to llama-cpp-python's server, which
starts its reply before it reads the prompt: a 200 whose stream ends before its first event;
a reply longer than `max_tokens` words is cut there with `finish_reason` "length", in every
mode; with a model, a reply's `usage` counts both and the server sums what it answered in
`usage`. llama-cpp-python's server answers a
`json_schema` response_format with its 500. Requests to the endpoints other than chat and
embeddings go to `asked`, not `requests`; `peak` is the most chat requests computed at
once, each taking `compute_s`.

`reply_bytes`, `gzip_replies`, `drip_s`, `usage_text` and `embed` make every
reply a hostile one: huge, a gzip bomb, dripped a byte at a time, with usage counts no model
reports, or with vectors of no numbers."""

from __future__ import annotations

import hashlib
import itertools
import json
import re
import threading
import time
import zlib
from collections import Counter
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field
from datetime import UTC, datetime
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

from lilo.tasks.config import Settings
from lilo.tasks.records import PaperText, QAPair, Sample
from lilo.warehouse import Warehouse

__all__ = [
    "EMBEDDING_DIM",
    "FAULTS",
    "PAIRS",
    "PAPER",
    "Faults",
    "LLMServer",
    "Model",
    "Refusal",
    "bag_of_words",
    "prompt_tokens",
    "seed_dataset",
    "serve_in_background",
]

FAULTS = ("429", "500", "503", "stall", "drop", "truncated", "empty", "content_type")

EMBEDDING_DIM = 256
_FUNCTION_WORDS = frozenset(
    "a an and are as at be by did do does for from how in is it of on or that the this to was "
    "were what which with".split()
)


def bag_of_words(text: str) -> list[float]:
    """A deterministic vector: each lower-case word adds 3 at a slot chosen by its hash (not
    1, so that a client that forgets to normalise is caught). Function words count only in a
    text that has nothing else, so that two of the offline engine's questions one name apart
    ("What test is reported for RMSE in connection with KernelForge?", "... with SpectraMix?")
    are not near-duplicates (cosine 0.8; the QA stage's threshold is 0.9), as they are not
    for the local model."""
    words = re.findall(r"\w+", text.lower())
    vector = [0.0] * EMBEDDING_DIM
    for word in [w for w in words if w not in _FUNCTION_WORDS] or words:
        vector[int(hashlib.sha256(word.encode()).hexdigest(), 16) % EMBEDDING_DIM] += 3.0
    return vector


PAPER = (
    "We introduce KernelForge, a kernel learning method for Gaussian processes.\n"
    "On the Kin40k benchmark, KernelForge obtains a test RMSE of 0.635.\n"
    "KernelForge reaches a negative log predictive density of 1.42 on the Airline-Passengers "
    "series.\nTraining takes 3.5 GPU hours on a single accelerator."
)
PAIRS = [
    {
        "question": "What test RMSE does KernelForge obtain on Kin40k?",
        "answer": "A test RMSE of 0.635.",
        "evidence": [{"paper": 1, "quote": "KernelForge obtains a test RMSE of 0.635."}],
    },
    {
        "question": "What negative log predictive density does KernelForge reach on Airline?",
        "answer": "1.42 on the Airline-Passengers series.",
        "evidence": [{"paper": 1, "quote": "negative log predictive density of 1.42"}],
    },
]


def kernel_samples(n: int) -> list[Sample]:
    """`n` one-paper samples about KernelForge, each paper its own."""
    return [
        Sample(f"s{i}", "v1", (f"2601.0000{i}",), "Kernels", "2601.00000", 40, "command")
        for i in range(n)
    ]


def seed_samples(settings: Settings, samples: list[Sample], repeat: int = 1) -> None:
    """A warehouse with `samples` ready for generation: each one's paper (PAPER about its own
    KernelForge, `repeat` times over) and the approved PAIRS."""
    papers = [
        PaperText(s.paper_ids[0], "K", PAPER.replace("KernelForge", f"KernelForge{i}") * repeat,
                  40 * repeat, 60 * repeat, "main.tex", "t", "s", f"c{i}")
        for i, s in enumerate(samples)
    ]  # fmt: skip
    pairs = [
        QAPair(f"{s.sample_id}-q{i}", s.sample_id, "single", s.paper_ids, p["question"],
               p["answer"], tuple(p["evidence"]), "approved", 1, "auto", "", "p1", "seed")
        for s in samples
        for i, p in enumerate(PAIRS)
    ]  # fmt: skip
    with Warehouse(settings.db_path) as wh:
        wh.upsert("dim_papers", papers, ("paper_id",), extra={"run_id": "seed"})
        wh.upsert("dim_samples", samples, ("sample_id",), extra={"run_id": "seed"})
        wh.upsert("fct_qa_pairs", pairs, ("qa_id",), extra={"run_id": "seed"})


def seed_dataset(settings: Settings, n_samples: int) -> None:
    """Dataset version v1 of `n_samples` seeded kernel samples (`seed_samples`), for a
    `lilo run --dataset v1`."""
    seed_samples(settings, kernel_samples(n_samples))
    with Warehouse(settings.db_path) as wh:
        wh.upsert(
            "dim_dataset_versions",
            [{"dataset_version": "v1", "number": 1,
              "created_at": datetime.now(UTC).replace(tzinfo=None), "surveys": ["s"],
              "n_samples": n_samples, "n_papers": n_samples, "config_hash": "seed"}],
            ("dataset_version",),
            extra={"run_id": "seed"},
        )  # fmt: skip


@dataclass(frozen=True)
class Refusal:
    """A scripted reply that is an error: `status` with `message`."""

    status: int
    message: str


@dataclass
class Faults:
    """A share `rate` of chat requests gets one of `kinds`, decided by `seed`; a stall
    lasts `stall_s` (set it past the client's timeout)."""

    rate: float
    seed: int = 0
    kinds: tuple[str, ...] = FAULTS
    stall_s: float = 1.0
    retry_after_s: float = 0.05
    seen: Counter[str] = field(default_factory=Counter)  # request hash -> times seen
    counts: Counter[str] = field(default_factory=Counter)  # fault kind -> times served

    def pick(self, body: bytes) -> str | None:
        digest = hashlib.sha256(body).hexdigest()
        nth = self.seen[digest]
        self.seen[digest] += 1
        draw = int(hashlib.sha256(f"{self.seed}:{digest}:{nth}".encode()).hexdigest(), 16)
        share = draw / 2**256
        if share >= self.rate:
            return None
        kind = self.kinds[int(share / self.rate * len(self.kinds))]
        self.counts[kind] += 1
        return kind


def _gzipped(parts: Iterable[bytes]) -> Iterator[bytes]:
    gzip = zlib.compressobj(wbits=31)
    yield from map(gzip.compress, parts)
    yield gzip.flush()


N_CTX_TRAIN = 32_768
"""The trained context llama-server's `/v1/models` names (Gemma 3 270M's): no request's window."""


@dataclass
class Model:
    """A served model with a context window (see the module's docstring): `kind` is one of
    vllm, llama.cpp, llama-cpp-python, ollama, openai; `slots` what llama-server says it
    computes at once, and then `window` is one slot's."""

    window: int
    kind: str = "vllm"
    slots: int = 0
    says: bool = True  # False: the window is named nowhere (only its rejections tell)
    chat_template: str | None = None  # llama-server's `/props` says it ("": none)
    created: int = 0  # the date `GET /v1/models` lists the model with (0: none), as vLLM's


def prompt_tokens(messages: list[dict[str, str]]) -> int:
    """The fake tokenizer: words of every message, and 4 for each message's template."""
    return sum(len(m["content"].split()) + 4 for m in messages)


def _context_error(model: Model, prompt: int, budget: int | None) -> dict[str, Any] | None:
    """The 400 body a server of `model.kind` answers for a prompt past its window, or None.
    vLLM and OpenAI count the budget asked for; llama.cpp servers only the prompt."""
    asked = prompt + (budget or 0)
    # llama.cpp's servers cut the budget to the room the prompt leaves.
    fits = asked <= model.window if model.kind in ("vllm", "openai") else prompt < model.window
    if fits or model.kind == "ollama":  # Ollama cuts the prompt silently
        return None
    if model.kind == "llama.cpp":
        return {
            "code": 400,
            "message": "the request exceeds the available context size, try increasing it",
            "type": "exceed_context_size_error",
            "n_prompt_tokens": prompt,
            "n_ctx": model.window,
        }
    message = f"This model's maximum context length is {model.window} tokens. "
    if budget or model.kind == "llama-cpp-python":
        message += (
            f"However, you requested {asked} tokens ({prompt} in the messages, {budget} in "
            "the completion). Please reduce the length of the messages or completion."
        )
    else:
        message += f"However, your messages resulted in {prompt} tokens."
    return {"message": message, "type": "invalid_request_error", "param": "messages"}


def _sse(payload: dict[str, Any], with_usage: bool) -> bytes:
    """`payload`, a chat or text completion, as the events a streaming server sends: the
    role (a chat's), a chunk per word (its spaces kept), the finish_reason, the usage where
    asked, [DONE]."""
    choice = payload["choices"][0]
    text = "text" in choice
    kind = "text_completion" if text else "chat.completion.chunk"
    head = {k: payload[k] for k in ("id", "created", "model")} | {"object": kind}

    def chunk(delta: dict[str, str], finish: str | None = None, **more: Any) -> dict[str, Any]:
        part = {"text": delta.get("content", "")} if text else {"delta": delta}
        return {**head, "choices": [{"index": 0, **part, "finish_reason": finish}], **more}

    words = re.findall(r"\s*\S+\s*|\s+", choice["text"] if text else choice["message"]["content"])
    events = [] if text else [chunk({"role": "assistant"})]
    events += [chunk({"content": w}) for w in words]
    events.append(chunk({}, choice["finish_reason"]))
    if with_usage:
        events.append({**head, "choices": [], "usage": payload["usage"]})
    lines = [f"data: {json.dumps(e)}\n\n" for e in events]
    return ("".join(lines) + "data: [DONE]\n\n").encode()


def serve_in_background(server: ThreadingHTTPServer) -> None:
    """`server` answering on a daemon thread until its `shutdown()`, which the loop looks for
    every 20 ms: at the default 0.5 s, every test using a server waited through it at its end."""
    threading.Thread(target=server.serve_forever, args=(0.02,), daemon=True).start()


class LLMServer(ThreadingHTTPServer):
    def __init__(self) -> None:
        super().__init__(("127.0.0.1", 0), _Handler)
        self.requests: list[dict[str, Any]] = []
        self.failures: list[int] = []  # statuses to answer before succeeding
        self.failing = 0  # a status every request gets while set (an outage)
        # The Retry-After a failure status carries; None: the failure sends none.
        self.retry_after: str | None = "0"
        self.arrivals: list[float] = []  # time.monotonic() each chat/embedding request came
        self.refuse_first = 0  # a status the first of each distinct request body gets
        self.refused: set[bytes] = set()
        # The message of a failure status; `{auth}` is the request's Authorization header,
        # as some servers echo it ("Incorrect API key provided: Bearer sk-...").
        self.error_message = "busy"
        self.faults: Faults | None = None
        self.answered = 0  # chat requests answered with a completion
        # An endpoint without structured output: a chat request carrying `response_format`
        # gets a 400 naming it, as such OpenAI-compatible servers answer.
        self.rejects_response_format = False
        # Hostile replies, for the bounds on what lilo reads: `reply_bytes` pads each reply
        # to that many bytes (a chat reply's content, an embedding reply's whitespace), written
        # in 1 MiB pieces and never held whole; `gzip_replies` compresses it (a bomb, padded);
        # `drip_s` sends the whole reply, status line first, one byte every `drip_s` seconds;
        # `usage_text` is the raw JSON text of a chat reply's usage (NaN, Infinity and 1e30
        # are what Python's json writes and reads); `embed` makes an embedding request's vectors.
        self.reply_bytes = 0
        self.gzip_replies = False
        self.drip_s = 0.0
        self.usage_text: str | None = None
        self.embed: Callable[[str], list[float]] = bag_of_words
        self.lock = threading.Lock()
        self.respond: Callable[[str, int], str | Refusal] = lambda prompt, n: f"echo: {prompt}"
        self.model: Model | None = None  # a context window, and the endpoints naming it
        self.asked: list[str] = []  # "GET /props" and the like, in order
        self.compute_s = 0.0  # how long each chat reply takes
        self.busy = 0  # chat requests being computed now
        self.peak = 0  # the most at once
        self.usage: Counter[str] = Counter()  # the `usage` of every completion answered
        # A streamed reply (`"stream": true`) sent one event every `chunk_s` seconds; when
        # the client hangs up on one, `hung_up` gets the time (time.monotonic()).
        self.chunk_s = 0.0
        self.hung_up: list[float] = []

    @property
    def prompts(self) -> list[list[dict[str, str]]]:
        return [r["messages"] for r in self.requests if "messages" in r]

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self.server_address[1]}/v1"

    def settings(self, data_dir: Any, **overrides: object) -> Settings:
        """Settings for the real OpenAI backend against this server, no retries."""
        llm = {"backend": "openai", "model": "scripted", "api_key": "sk-test", "retries": 0}
        llm["base_url"] = self.base_url
        return Settings(data_dir=data_dir).with_overrides({"llm": llm, **overrides})

    def embedding_env(self) -> dict[str, str]:
        """The environment that points lilo's embeddings (the `openai` backend) here."""
        values = {"BACKEND": "openai", "BASE_URL": self.base_url, "API_KEY": "sk-test",
                  "MODEL": "bag"}  # fmt: skip
        return {f"LILO_EMBEDDING__{key}": value for key, value in values.items()}

    def __enter__(self) -> LLMServer:
        serve_in_background(self)
        return self

    def __exit__(self, *exc: object) -> None:
        self.shutdown()
        self.server_close()


class _Handler(BaseHTTPRequestHandler):
    server: LLMServer

    def log_message(self, *args: object) -> None:
        pass

    def do_GET(self) -> None:  # noqa: N802 (http.server's naming)
        self._about(None)

    def do_POST(self) -> None:  # noqa: N802 (http.server's naming)
        raw = self.rfile.read(int(self.headers["Content-Length"]))
        body = json.loads(raw)
        if not self.path.startswith(("/v1/chat/", "/v1/completions", "/v1/embeddings")):
            self._about(body)
            return
        server = self.server
        with server.lock:
            server.requests.append(
                {"path": self.path, "auth": self.headers.get("Authorization"), **body}
            )
            server.arrivals.append(time.monotonic())
            status = server.failures.pop(0) if server.failures else server.failing
            if not status and server.refuse_first and raw not in server.refused:
                server.refused.add(raw)
                status = server.refuse_first
            chat = not self.path.endswith("/embeddings")
            fault = server.faults.pick(raw) if server.faults and chat and not status else None
        if status:
            message = server.error_message.format(auth=self.headers.get("Authorization"))
            after = server.retry_after
            headers = {"Retry-After": after} if after is not None else {}
            self._send(status, {"error": {"message": message}}, headers)
            return
        if not chat:
            self._embeddings(body)
            return
        if server.rejects_response_format and "response_format" in body:
            message = "response_format of type json_schema is not supported by this model"
            error = {"message": message, "type": "invalid_request_error"}
            self._send(400, {"error": {**error, "param": "response_format"}})
            return
        if fault and self._fault(fault):
            return
        model = server.model
        budget = body.get("max_tokens")
        wanted = body.get("response_format") or {}
        if model and model.kind == "llama-cpp-python" and wanted.get("type") == "json_schema":
            message = "Input should be 'text' or 'json_object' ('body', 'response_format', 'type')"
            self._send(500, {"error": {"message": message, "type": "internal_server_error"}})
            return
        text = "prompt" in body  # a completion: its text alone, no template's tokens
        messages = [{"content": body["prompt"]}] if text else body["messages"]
        tokens = len(body["prompt"].split()) if text else prompt_tokens(messages)
        if model and (error := _context_error(model, tokens, budget)):
            if body.get("stream") and model.kind == "llama-cpp-python":
                self._send_bytes(200, b"", "text/event-stream")  # its stream dies unsaid
                return
            self._send(400, {"error": error})
            return
        with server.lock:
            server.busy += 1
            server.peak = max(server.peak, server.busy)
        time.sleep(server.compute_s)
        content = (
            ""
            if fault == "empty"
            else server.respond(messages[-1]["content"], 0 if text else len(messages))
        )
        with server.lock:
            server.busy -= 1
        if isinstance(content, Refusal):
            self._send(content.status, {"error": {"message": content.message}})
            return
        finish = "stop"
        for stop in body.get("stop") or []:
            content = content.split(stop)[0]
        if budget is not None and len(content.split()) > budget:
            content, finish = " ".join(content.split()[:budget]), "length"
        usage = {"prompt_tokens": 11, "completion_tokens": 3}
        if model:
            usage = {
                "prompt_tokens": tokens,
                "completion_tokens": len(content.split()),
            }
        choice: dict[str, Any] = {"index": 0, "text": content, "logprobs": None}
        if not text:
            choice = {"index": 0, "message": {"role": "assistant", "content": content}}
        payload = {
            "id": "cmpl-1" if text else "chatcmpl-1",
            "object": "text_completion" if text else "chat.completion",
            "created": 0,
            "model": body["model"],
            "choices": [{**choice, "finish_reason": finish}],
            "usage": {**usage, "total_tokens": sum(usage.values())},
        }
        data = json.dumps(payload).encode()
        if body.get("stream"):
            data = _sse(payload, bool((body.get("stream_options") or {}).get("include_usage")))
        if server.usage_text is not None:
            data = data.replace(json.dumps(payload["usage"]).encode(), server.usage_text.encode())
        kind = "text/event-stream" if body.get("stream") else "application/json"
        if fault == "truncated":
            self._send_bytes(200, data[: len(data) // 2], kind)
            return
        if not fault:
            with server.lock:
                server.answered += 1
                server.usage.update(usage)
        if body.get("stream") and server.chunk_s:
            self._drip_events(data)
            return
        if text and not body.get("stream"):
            at = data.index(b'", "logprobs"')  # padded in the completion's text
        else:
            content = data.find(b'"content": "')  # padded in the reply's (first) content
            at = max(0, data.find(b'"}, "finish_reason"', content))
        self._hostile(data, at, b"a", kind)

    def _drip_events(self, data: bytes) -> None:
        """A streamed reply one event every `chunk_s` seconds, as a server computing it
        token by token sends it; a client gone is recorded in `hung_up`."""
        server = self.server
        self.close_connection = True
        head = "HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\nConnection: close\r\n\r\n"
        try:
            self.wfile.write(head.encode())
            for event in data.split(b"\n\n"):
                if event:
                    self.wfile.write(event + b"\n\n")
                    self.wfile.flush()
                    time.sleep(server.chunk_s)
        except (BrokenPipeError, ConnectionResetError):
            with server.lock:
                server.hung_up.append(time.monotonic())

    def _about(self, body: dict[str, Any] | None) -> None:
        """The endpoints a server of `model.kind` has beside chat: what it says about the
        model and its tokenizer; 404 for the others."""
        server, model = self.server, self.server.model
        with server.lock:
            server.asked.append(f"{self.command} {self.path}")
        kind = model.kind if model else "openai"
        says = model is not None and model.says
        found: dict[str, Any] | None = None
        if self.path == "/v1/models":
            entry: dict[str, Any] = {"id": "scripted", "object": "model"}
            if model and model.created:
                entry["created"] = model.created
            if model and says and kind == "vllm":
                entry["max_model_len"] = model.window
            elif model and says and kind == "llama.cpp":  # a slot's window, the model's own
                entry["meta"] = {"n_ctx": model.window, "n_ctx_train": N_CTX_TRAIN}
            found = {"object": "list", "data": [entry]}
        elif self.path == "/props" and model and says and kind == "llama.cpp":
            found = {
                "default_generation_settings": {"n_ctx": model.window},
                "total_slots": model.slots or 1,
            }
            if model.chat_template is not None:
                found["chat_template"] = model.chat_template
        elif self.path == "/api/show" and model and says and kind == "ollama":
            found = {"model_info": {"gemma3.context_length": model.window}, "parameters": ""}
        elif self.path == "/tokenize" and body and kind == "vllm":
            found = {"count": prompt_tokens(body["messages"])}
        elif self.path == "/tokenize" and body and kind == "llama.cpp":
            found = {"tokens": list(range(len(body["content"].split())))}
        elif self.path == "/extras/tokenize/count" and body and kind == "llama-cpp-python":
            found = {"count": len(body["input"].split())}
        if found is None:
            self._send(404, {"detail": "Not Found"})
        else:
            self._send(200, found)

    def _fault(self, kind: str) -> bool:
        """Serve a fault that replaces the whole reply; False for those that shape it."""
        faults = self.server.faults
        assert faults is not None
        if kind in ("429", "500", "503"):
            error = {"error": {"message": f"injected {kind}", "type": "server_error"}}
            retry = {"Retry-After": f"{faults.retry_after_s}"} if kind == "429" else {}
            self._send(int(kind), error, retry)
        elif kind == "stall":
            time.sleep(faults.stall_s)  # the client has given up by now
            self._send(500, {"error": {"message": "stalled"}})
        elif kind == "drop":
            self.close_connection = True
            self.connection.shutdown(2)  # socket.SHUT_RDWR: no status line at all
        elif kind == "key_echo":
            auth = self.headers.get("Authorization")
            self._send(400, {"error": {"message": f"Incorrect API key provided: {auth}"}})
        elif kind == "content_type":
            self._send_bytes(200, b"<html><body>Bad gateway</body></html>", "text/html")
        else:
            return False
        return True

    def _embeddings(self, body: dict[str, Any]) -> None:
        texts = [body["input"]] if isinstance(body["input"], str) else body["input"]
        data = [
            {"object": "embedding", "index": i, "embedding": self.server.embed(t)}
            for i, t in reversed(list(enumerate(texts)))
        ]
        tokens = sum(len(t.split()) for t in texts)
        usage = {"prompt_tokens": tokens, "total_tokens": tokens}
        reply = {"object": "list", "data": data, "model": body["model"], "usage": usage}
        encoded = json.dumps(reply).encode()
        self._hostile(encoded, len(encoded) - 1, b" ")

    def _hostile(self, data: bytes, at: int, filler: bytes, kind: str = "application/json") -> None:
        """A 200 with `data`, made hostile as the server is set: padded at `at` with
        `filler` up to `reply_bytes`, gzipped, or dripped; its length unsaid, as a streaming
        server's (the body ends when the connection closes)."""
        server = self.server
        if not (server.reply_bytes or server.drip_s or server.gzip_replies):
            self._send_bytes(200, data, kind)
            return
        head = f"HTTP/1.1 200 OK\r\nContent-Type: {kind}\r\nConnection: close\r\n"
        pad, piece = max(0, server.reply_bytes - len(data)), filler * (1 << 20)
        parts: Iterable[bytes] = [
            data[:at],
            *[piece] * (pad // len(piece)),
            filler * (pad % len(piece)),
            data[at:],
        ]
        if server.gzip_replies:
            head += "Content-Encoding: gzip\r\n"
            parts = _gzipped(parts)
        self.close_connection = True
        try:
            for part in itertools.chain([f"{head}\r\n".encode()], parts):
                if not server.drip_s:
                    self.wfile.write(part)
                    continue
                for i in range(len(part)):
                    self.wfile.write(part[i : i + 1])
                    self.wfile.flush()
                    time.sleep(server.drip_s)
        except (BrokenPipeError, ConnectionResetError):
            pass  # the client gave up, as it should

    def _send(
        self, status: int, payload: dict[str, Any], headers: dict[str, str] | None = None
    ) -> None:
        self._send_bytes(status, json.dumps(payload).encode(), "application/json", headers)

    def _send_bytes(
        self, status: int, data: bytes, content_type: str, headers: dict[str, str] | None = None
    ) -> None:
        self.send_response(status)
        for name, value in ({"Retry-After": "0"} if headers is None else headers).items():
            self.send_header(name, value)
        self.send_header("Content-Type", content_type)
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        try:
            self.wfile.write(data)
        except (BrokenPipeError, ConnectionResetError):
            pass  # the client gave up (a stall past its timeout)
