"""Any OpenAI-compatible endpoint (OpenAI, vLLM, Ollama, llama.cpp server) via `openai`."""

from __future__ import annotations

import dataclasses
import email.utils
import functools
import json
import logging
import os
import random
import re
import time
from collections.abc import Callable, Iterable, Iterator
from types import SimpleNamespace
from typing import Any

import httpx2

from lilo.tasks.backoff import BAD_REPLY
from lilo.tasks.bounded_http import Bounds, ReplyRefused, bounded_client
from lilo.tasks.config import LLMSettings
from lilo.tasks.errors import InputError, LiloError
from lilo.tasks.lifetime import raise_if_stopping
from lilo.tasks.live import LIVE
from lilo.tasks.llm.checks import usage_counts
from lilo.tasks.llm.types import (
    API,
    Completion,
    CompletionPrompt,
    ContextRejected,
    EndpointFacts,
    Message,
    ResponseFormatUnsupported,
)
from lilo.tasks.llm.window import PER_MESSAGE_TOKENS
from lilo.tasks.tokens import count_word_tokens

__all__ = ["OpenAIBackend", "read_stream", "sse_events"]

log = logging.getLogger(__name__)


@functools.cache
def _asking() -> httpx2.Client:
    """The client that asks endpoints about themselves, shared by every endpoint."""
    return bounded_client(_ASK_BOUNDS)


@functools.cache
def _client(base_url: str, api_key: str, timeout_s: float, max_bytes: int) -> Any:
    """One `openai.OpenAI` per endpoint and process: each new one sets up its connections
    again (TLS included, about 120 ms), and one is safe to share between threads. Its
    requests are bounded in time and size (tasks/bounded_http.py)."""
    import openai

    bounds = Bounds(timeout_s, max_bytes, "max_reply_bytes")
    http = bounded_client(bounds, limits=openai.DEFAULT_CONNECTION_LIMITS)
    # lilo asks again itself (`OpenAIBackend.complete`): each request sent is one the
    # ledger counts, and a request that timed out, which the server may still be
    # computing, is not sent again.
    return openai.OpenAI(
        base_url=base_url, api_key=api_key, max_retries=0, timeout=timeout_s, http_client=http
    )


class BadReply(LiloError):
    """A 200 whose body is no usable completion: cut-off or non-JSON body, no choices, or
    empty content. Asked again like a 5xx, since a well-behaved server never sends one."""


class StreamDied(BadReply):
    """A stream that ended before its first chunk: a server that fails a request after
    starting its reply (llama-cpp-python refuses a prompt past its window so) says why only
    when asked without streaming."""


# Endpoints (base URL, model) that rejected `response_format` in this process: not asked again.
_NO_RESPONSE_FORMAT: set[tuple[str, str]] = set()
# Endpoints whose stream had no usage, said once per process (`read_stream`).
_NO_USAGE: set[str] = set()
# What each endpoint (base URL, model) said about itself, asked once per process.
_FACTS: dict[tuple[str, str], EndpointFacts] = {}

# An endpoint's own words about itself (`facts`, `count_tokens`): within 10 s, at most 1 MB.
_ASK_BOUNDS = Bounds(10.0, 1_000_000, "the endpoint's self-description")
# The longest Retry-After honoured, as the openai client does.
_MAX_RETRY_AFTER_S = 60.0


class OpenAIBackend:
    name = "openai"

    def __init__(self, cfg: LLMSettings) -> None:
        """The endpoint `cfg` names (the `llm` section, or the judge's as `judge_settings`
        makes it)."""
        base_url = cfg.base_url or os.environ.get("OPENAI_BASE_URL")
        api_key = cfg.key()
        if not api_key and not base_url:
            raise InputError(
                "llm.backend=openai needs a key or an endpoint: set LILO_LLM__API_KEY "
                "(or OPENAI_API_KEY), LILO_LLM__BASE_URL for a self-hosted server, "
                "or use LILO_LLM__BACKEND=offline"
            )
        self.model = cfg.model
        self.base_url = base_url or "https://api.openai.com/v1"
        self.retries = cfg.retries
        self.rng = random.Random()  # draws the jittered waits (tests seed it)
        self.keep_empty = cfg.empty_reply == "keep"
        self.fit_max_tokens = cfg.fit_max_tokens
        self.weights = cfg.weights
        self.api_setting = cfg.api
        self.stream = cfg.stream
        self._key = api_key or "not-needed"
        self._client = _client(self.base_url, self._key, cfg.timeout_s, cfg.max_reply_bytes)

    def batch_client(self) -> Any:
        """The `openai.OpenAI` client of this endpoint: what sends its batches."""
        return self._client

    def fingerprint(self) -> dict[str, object]:
        """Two servers may serve different weights under one model name: the address, or
        what `llm.weights` names (a server started on a free port, flows/cli/_local_model.py);
        `max_tokens` sent as asked, past the window, is another request than the fitted one;
        an empty reply kept (`llm.empty_reply`) is another answer than one asked again; a
        completion (`llm.api`) is another request than a chat."""
        kept = {} if self.fit_max_tokens else {"max_tokens": "as asked"}
        if self.keep_empty:
            kept["empty_reply"] = "keep"
        if self.api() == "completions":
            kept["api"] = "completions"
        served = {"weights": self.weights} if self.weights else {"base_url": self.base_url}
        return {**served, **kept}

    def api(self) -> API:
        """`llm.api`; `auto`: completions where the server says its model has no chat
        template (llama-server's `/props`), else chat. Resolved before the first request
        (the cache key holds it), so `auto` asks the server once per process."""
        if self.api_setting != "auto":
            return self.api_setting
        return "completions" if self.facts().chat_template is False else "chat"

    def facts(self) -> EndpointFacts:
        """The window, slots and tokenizer the server names: vLLM in `/v1/models`,
        llama-server in `/props`, Ollama in `/api/show`; llama-cpp-python's server names
        no window but counts tokens at `/extras/tokenize/count`, and computes one request
        at a time. With them, who the server is as far as it says (`EndpointFacts.identity`).
        Asked once per process."""
        where = (self.base_url, self.model)
        if where not in _FACTS:
            try:
                _FACTS[where] = self._facts()
            except (httpx2.TransportError, ReplyRefused):  # the request itself will say so
                _FACTS[where] = EndpointFacts()
        return _FACTS[where]

    def _facts(self) -> EndpointFacts:
        models = self._ask("GET", "/v1/models")
        entry = next((e for e in _entries(models) if e.get("id") == self.model), {})
        # Who serves the model as far as it says: the id and date it lists the model with,
        # the file llama-server names, the window it states (untrusted: strings and numbers).
        named = {k: entry[k] for k in ("id", "created") if isinstance(entry.get(k), (str, int))}
        facts = self._stated(entry, named)
        identity = json.dumps({**named, "window": facts.window}, sort_keys=True)
        return dataclasses.replace(facts, identity=identity)

    def _stated(self, entry: dict[str, Any], named: dict[str, Any]) -> EndpointFacts:
        """The window, slots and tokenizer, from the model's `/v1/models` entry or the other
        endpoints; the model file llama-server names goes into `named`."""
        if _count(entry.get("max_model_len")):
            return EndpointFacts(window=_count(entry["max_model_len"]), tokenizer="vllm")
        props = self._ask("GET", "/props")
        if isinstance(props, dict) and "default_generation_settings" in props:
            settings = props["default_generation_settings"]
            window = _count(settings.get("n_ctx")) if isinstance(settings, dict) else 0
            slots = _count(props.get("total_slots"))
            if isinstance(props.get("model_path"), str):
                named["path"] = props["model_path"]
            template = props.get("chat_template")
            has = bool(template.strip()) if isinstance(template, str) else None
            return EndpointFacts(window, slots, "llama.cpp", chat_template=has)
        shown = self._ask("POST", "/api/show", {"model": self.model, "name": self.model})
        if isinstance(shown, dict) and isinstance(shown.get("model_info"), dict):
            return EndpointFacts(window=_ollama_window(shown))
        counted = self._ask("POST", "/extras/tokenize/count", {"input": "a", "model": self.model})
        if isinstance(counted, dict) and _count(counted.get("count")):
            # Its server computes one request at a time (one model behind one lock).
            return EndpointFacts(slots=1, tokenizer="llama-cpp-python")
        return EndpointFacts()

    def count_tokens(self, messages: list[Message], tokenizer: str) -> int | None:
        """vLLM counts the messages as its chat template renders them; llama-server and
        llama-cpp-python count text, to which the template's tokens per message are added.
        A completion's one message is its text, counted as sent: no template's tokens."""
        try:
            return self._count_tokens(messages, tokenizer)
        except (httpx2.TransportError, ReplyRefused):
            return None

    def _count_tokens(self, messages: list[Message], tokenizer: str) -> int | None:
        text = "\n".join(m.get("content", "") for m in messages)
        completions = self.api() == "completions"
        template = 0 if completions else PER_MESSAGE_TOKENS * len(messages)
        if tokenizer == "vllm":
            body: dict[str, Any] = {"model": self.model, "prompt": text}
            if not completions:
                body = {"model": self.model, "messages": messages, "add_generation_prompt": True}
            return _count((self._ask("POST", "/tokenize", body) or {}).get("count")) or None
        if tokenizer == "llama.cpp":
            tokens = (self._ask("POST", "/tokenize", {"content": text}) or {}).get("tokens")
            return len(tokens) + template if isinstance(tokens, list) else None
        if tokenizer == "llama-cpp-python":
            body = {"input": text, "model": self.model}
            counted = _count((self._ask("POST", "/extras/tokenize/count", body) or {}).get("count"))
            return counted + template if counted else None
        return None

    def _ask(self, method: str, path: str, body: dict[str, Any] | None = None) -> Any:
        """The JSON the server answers at `path` (beside `/v1`), None for any other answer;
        httpx2.TransportError where the server cannot be reached in time, ReplyRefused for
        a reply past the 1 MB of `_ASK_BOUNDS`."""

        root = re.sub(r"/v1/?$", "", self.base_url.rstrip("/"))
        response = _asking().request(
            method,
            root + path,
            json=body,
            headers={"Authorization": f"Bearer {self._key}"},
        )
        try:
            return response.json() if response.status_code == 200 else None
        except ValueError:
            return None

    def complete(
        self,
        messages: list[Message],
        *,
        temperature: float,
        max_tokens: int | None,
        response_format: dict[str, Any] | None = None,
        sending: Callable[[], None] | None = None,
        prompt: CompletionPrompt | None = None,
    ) -> Completion:
        """The reply: to `messages` at `/v1/chat/completions`, or with `prompt` to its text
        at `/v1/completions`. A 408/409/429/5xx, a dropped connection or a bad reply (see
        `BadReply`) is asked again up to `retries` times, after the server's Retry-After
        or a wait `BAD_REPLY` jitters (drawn by `rng` in [0, 0.5 s doubling, at most 8 s]);
        a request that timed out is not (the server may be computing it still). An endpoint
        that rejects `response_format` raises ResponseFormatUnsupported, at once once it has
        rejected it in this process, and a completion with one at once (the API has none); one that
        rejects the prompt's length raises ContextRejected. A stream that dies before its
        first chunk (`StreamDied`) is asked again at once, unstreamed. A run that stops
        (tasks/lifetime.py) asks nothing again: its stop hangs up the request in flight,
        which raises `Interrupted`."""
        import openai

        if response_format is not None and (self.base_url, self.model) in _NO_RESPONSE_FORMAT:
            raise ResponseFormatUnsupported(f"{self.base_url} rejected response_format before")
        if response_format is not None and prompt is not None:
            raise ResponseFormatUnsupported("/v1/completions takes no response_format")
        stream, attempt = self.stream, 0
        while True:
            raise_if_stopping()
            if sending is not None:
                sending()  # in the ledger, each request: an unstreamed ask again too
            try:
                with LIVE.streaming() as received:
                    if prompt is not None:
                        return self._complete_text(
                            prompt, temperature, max_tokens, received, stream
                        )
                    return self._complete(
                        messages, temperature, max_tokens, response_format, received, stream
                    )
            except StreamDied:
                raise_if_stopping()
                stream = False  # asked again at once, unstreamed: the server says why
            except (BadReply, openai.APIStatusError, openai.APIConnectionError) as exc:
                raise_if_stopping()  # what the hang-up broke is the stop
                wait = _retry_wait(exc, attempt, self.rng)
                if wait is None or attempt == self.retries:
                    raise
                time.sleep(wait)
                attempt += 1

    def _complete(
        self,
        messages: list[Message],
        temperature: float,
        max_tokens: int | None,
        response_format: dict[str, Any] | None,
        received: Callable[[int], None],
        stream: bool,
    ) -> Completion:
        """One `/v1/chat/completions` request."""
        options = self._options(max_tokens, stream)
        if response_format is not None:
            options["response_format"] = self._response_format(response_format)
        return self._send(
            lambda options: self._client.chat.completions.create(
                model=self.model,
                messages=messages,
                temperature=temperature,
                **options,
            ),
            options,
            sum(count_word_tokens(m.get("content", "")) for m in messages),
            lambda choice: choice.message.content,
            received,
            response_format,
        )

    def _complete_text(
        self,
        prompt: CompletionPrompt,
        temperature: float,
        max_tokens: int | None,
        received: Callable[[int], None],
        stream: bool,
    ) -> Completion:
        """One `/v1/completions` request: the prompt's text continued, up to a stop."""
        options = self._options(max_tokens, stream)
        if prompt.stop:
            options["stop"] = list(prompt.stop)
        return self._send(
            lambda options: self._client.completions.create(
                model=self.model, prompt=prompt.text, temperature=temperature, **options
            ),
            options,
            count_word_tokens(prompt.text),
            lambda choice: choice.text,
            received,
            None,
        )

    @staticmethod
    def _options(max_tokens: int | None, stream: bool) -> dict[str, Any]:
        """What every request carries besides its prompt: the budget, and streaming
        (`llm.stream`) with the usage asked for at the stream's end."""
        options: dict[str, Any] = {} if max_tokens is None else {"max_tokens": max_tokens}
        if stream:
            options["stream"] = True
            options["stream_options"] = {"include_usage": True}
        return options

    def _send(
        self,
        create: Callable[[dict[str, Any]], Any],
        options: dict[str, Any],
        estimate: int,
        text_of: Callable[[Any], str | None],
        received: Callable[[int], None],
        response_format: dict[str, Any] | None,
    ) -> Completion:
        """The reply to the request `create` sends with `options`, streamed or not;
        `estimate` is the prompt's tokens where a stream reports no usage. A refusal naming
        the prompt's length raises ContextRejected, one naming `response_format`
        ResponseFormatUnsupported (refused as a 400, a 422 or, by llama-cpp-python, a 500
        naming it)."""
        import openai

        try:
            response = create(options)
        except openai.APIStatusError as exc:
            if response_format is not None and _names_response_format(exc):
                _NO_RESPONSE_FORMAT.add((self.base_url, self.model))
                raise ResponseFormatUnsupported(str(exc)) from exc
            rejected = _context_rejection(exc) if exc.status_code == 400 else None
            if rejected is not None:
                raise rejected from exc
            raise
        except (openai.APIResponseValidationError, ValueError) as exc:  # JSON cut short
            raise BadReply(f"unreadable reply: {exc}") from exc
        if options.get("stream"):
            events = sse_events(response.response)
            return read_stream(events, self.base_url, self.keep_empty, estimate, received)
        return self._read_reply(response, text_of)

    def _read_reply(self, response: Any, text_of: Callable[[Any], str | None]) -> Completion:
        """The completion an unstreamed reply holds, its first choice's text by `text_of`
        (a chat's message, a text completion's text); a BadReply where it holds none."""
        choices = getattr(response, "choices", None)
        if not choices:
            raise BadReply(f"no completion in the reply: {str(response)[:200]!r}")
        text = text_of(choices[0]) or ""
        if not text.strip() and not self.keep_empty:  # `llm.empty_reply`
            raise BadReply("empty reply")
        tokens_in, tokens_out = usage_counts(response.usage, self.base_url)
        return Completion(
            text=text,
            tokens_in=tokens_in,
            tokens_out=tokens_out,
            finish_reason=choices[0].finish_reason or "stop",
        )

    def _response_format(self, response_format: dict[str, Any]) -> dict[str, Any]:
        """`response_format` as the server takes it: llama-cpp-python's server knows no
        `json_schema` type, but takes the schema with `json_object`."""
        facts = _FACTS.get((self.base_url, self.model), EndpointFacts())
        if facts.tokenizer == "llama-cpp-python" and response_format["type"] == "json_schema":
            return {"type": "json_object", "schema": response_format["json_schema"]["schema"]}
        return response_format


def read_stream(
    chunks: Iterable[Any],
    where: str,
    keep_empty: bool,
    prompt_estimate: int,
    received: Callable[[int], None],
) -> Completion:
    """The completion a streamed reply's chunks (the JSON of its events, as `sse_events`
    reads them: a chat's with `delta.content`, a text completion's with `text`) add up to,
    each content chunk passed to `received` as a token. Tokens are the final chunk's
    `usage`; a stream without one counts a token per content chunk and estimates the
    prompt's (`prompt_estimate`), with a warning once per endpoint. A stream that ends
    without a finish_reason (cut short), an error event, a chunk of another shape or an
    empty reply (unless `keep_empty`) is a `BadReply`. The stream is closed whatever
    happens: a server that stops on a disconnect stops computing."""
    pieces: list[str] = []
    finish: str | None = None
    usage: Any = None
    count = 0
    try:
        for chunk in chunks:
            if not isinstance(chunk, dict):
                raise BadReply(f"a streamed chunk that is no object: {str(chunk)[:200]!r}")
            if chunk.get("error"):
                raise BadReply(f"error in the streamed reply: {str(chunk['error'])[:200]}")
            usage = chunk.get("usage") or usage
            for choice in chunk.get("choices") or []:
                if not isinstance(choice, dict) or choice.get("index", 0) != 0:
                    continue
                delta = choice.get("delta")
                piece = delta.get("content") if isinstance(delta, dict) else choice.get("text")
                if isinstance(piece, str) and piece:
                    pieces.append(piece)
                    count += 1
                    received(1)
                finish = choice.get("finish_reason") or finish
    finally:
        close = getattr(chunks, "close", None)
        if close is not None:
            close()
    if not isinstance(finish, str):
        raise_if_stopping()  # hung up by the stop
        raise (StreamDied if count == 0 else BadReply)(
            f"streamed reply cut short after {count} chunks, with no finish_reason (for a "
            "server that does not stream, set llm.stream = false)"
        )
    text = "".join(pieces)
    if not text.strip() and not keep_empty:  # `llm.empty_reply`
        raise BadReply("empty reply")
    if not isinstance(usage, dict):
        if where not in _NO_USAGE:
            _NO_USAGE.add(where)
            log.warning(
                "%s streams no usage: a reply's tokens are counted as its chunks and a "
                "prompt's estimated from its words",
                where,
            )
        return Completion(text, prompt_estimate, count, finish)
    counts = SimpleNamespace(**{k: usage.get(k) for k in ("prompt_tokens", "completion_tokens")})
    tokens_in, tokens_out = usage_counts(counts, where)
    return Completion(text, tokens_in, tokens_out, finish)


def sse_events(response: httpx2.Response) -> Iterator[Any]:
    """The JSON of each `data:` event of a streamed reply, up to `[DONE]`, read as they
    come (a last event the stream ends in the middle of is not one); the reply closed
    when the iterator is. Parsed here rather than by `openai`'s
    chunk models, which took about 2 ms a chunk (a 200-word reply: 430 ms against 64 ms
    unstreamed). A failure to read is the `openai` error for it, a timeout
    APITimeoutError, another APIConnectionError; an event that is no JSON a BadReply."""
    import openai

    data: list[str] = []
    try:
        for line in response.iter_lines():  # an event with no blank line after it is cut
            if line.startswith("data:"):
                data.append(line[5:].removeprefix(" "))
            elif not line and data:
                text, data = "\n".join(data), []
                if text.startswith("[DONE]"):
                    return
                try:
                    yield json.loads(text)
                except ValueError as exc:
                    raise BadReply(f"unreadable streamed chunk: {exc}") from exc
    except httpx2.TimeoutException as exc:
        raise openai.APITimeoutError(request=response.request) from exc
    except httpx2.RequestError as exc:
        raise openai.APIConnectionError(request=response.request) from exc
    finally:
        response.close()


def _retry_wait(exc: Exception, attempt: int, rng: random.Random) -> float | None:
    """Seconds to wait before asking again, or None for a failure not worth asking again:
    the server's Retry-After when it sent one, else `BAD_REPLY` jittered by `rng`."""
    import openai

    if isinstance(exc, openai.APITimeoutError):
        return None
    if isinstance(exc, openai.APIStatusError):
        if exc.status_code not in (408, 409, 429) and exc.status_code < 500:
            return None
        after = _retry_after(exc.response.headers)
        if after is not None:
            return after
    return BAD_REPLY.jittered_s(attempt, rng)


def _retry_after(headers: Any) -> float | None:
    """The server's Retry-After (seconds or an HTTP date; `retry-after-ms` first), if it
    gave one up to a minute."""
    try:
        if "retry-after-ms" in headers:
            seconds = float(headers["retry-after-ms"]) / 1000
        elif "retry-after" in headers:
            value = headers["retry-after"]
            try:
                seconds = float(value)
            except ValueError:
                seconds = email.utils.parsedate_to_datetime(value).timestamp() - time.time()
        else:
            return None
    except (TypeError, ValueError):
        return None
    return seconds if 0 <= seconds <= _MAX_RETRY_AFTER_S else None


def _names_response_format(exc: Exception) -> bool:
    text = str(exc).lower()
    return "response_format" in text or "json_schema" in text


# The window and the prompt's tokens as vLLM, OpenAI and llama-cpp-python word a rejection.
_WINDOW_RE = re.compile(r"maximum context length is (\d{1,9}) tokens")
_PROMPT_RES = [
    re.compile(r"\b(\d{1,9}) in the messages"),  # vLLM, OpenAI, llama-cpp-python
    re.compile(r"messages resulted in (\d{1,9}) tokens"),  # OpenAI
    re.compile(r"request has (\d{1,9}) input tokens"),  # vLLM, newer wording
    re.compile(r"\b(\d{1,9}) in your prompt"),  # a completion: llama-cpp-python, OpenAI
]
_NUM_CTX_RE = re.compile(r"^num_ctx\s+(\d{1,9})\b", re.M)  # an Ollama Modelfile's


def _context_rejection(exc: Any) -> ContextRejected | None:
    """The 400 of a prompt past the window, as ContextRejected; None for any other 400.
    llama-server says it in its error's fields (`exceed_context_size_error`)."""
    body = exc.body if isinstance(exc.body, dict) else {}
    text = str(exc)
    window, prompt = _count(body.get("n_ctx")), _count(body.get("n_prompt_tokens"))
    if not window and (found := _WINDOW_RE.search(text)):
        window = _count(int(found.group(1)))
    if not window:
        return None
    for pattern in _PROMPT_RES:
        if not prompt and (found := pattern.search(text)):
            prompt = _count(int(found.group(1)))
    return ContextRejected(text, window, prompt)


def _count(value: object) -> int:
    """A positive token count as a server states it (at most 100M), else 0: what a server
    says is untrusted."""
    if isinstance(value, int) and not isinstance(value, bool) and 0 < value <= 100_000_000:
        return value
    return 0


def _entries(models: Any) -> list[dict[str, Any]]:
    data = models.get("data") if isinstance(models, dict) else None
    return [e for e in data if isinstance(e, dict)] if isinstance(data, list) else []


def _ollama_window(shown: dict[str, Any]) -> int:
    """Ollama's window: the model's `num_ctx` parameter where its Modelfile sets one, else
    the context length in its model_info."""
    parameters = shown.get("parameters")
    if isinstance(parameters, str) and (found := _NUM_CTX_RE.search(parameters)):
        return _count(int(found.group(1)))
    lengths = [v for k, v in shown["model_info"].items() if k.endswith(".context_length")]
    return _count(lengths[0]) if lengths else 0
