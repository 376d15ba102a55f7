"""Streamed replies (`llm.stream`, on by default) through the real `openai` client against
the loopback server: the reply, its tokens and the cache key are those of the same reply
unstreamed; a stream without usage is counted by its chunks, one cut short is asked again;
the progress line moves while a streamed request is under way; a stop hangs it up."""

from __future__ import annotations

import threading
import time
from collections.abc import Iterator

import pytest
from llm_server import LLMServer

from lilo.flows._progress import StageProgress
from lilo.flows._stage import StageReport
from lilo.tasks.bounded_http import hang_up
from lilo.tasks.llm import LLMError, make_client

MESSAGES = [{"role": "user", "content": "Tell me about kernels."}]


@pytest.fixture
def server() -> Iterator[LLMServer]:
    with LLMServer() as server:
        yield server


def test_a_streamed_reply_is_the_unstreamed_one_under_the_same_key(tmp_path, server):
    streamed = make_client(server.settings(tmp_path / "a"))
    plain = make_client(server.settings(tmp_path / "b").with_overrides({"llm": {"stream": False}}))
    one = streamed.complete(MESSAGES, purpose="t", max_tokens=4)
    other = plain.complete(MESSAGES, purpose="t", max_tokens=4)
    assert one == other and one.finish_reason == "length" and one.text == "echo: Tell me about"
    assert (one.tokens_in, one.tokens_out) == (11, 3)  # the final chunk's usage
    assert [r.get("stream") for r in server.requests] == [True, None]
    assert server.requests[0]["stream_options"] == {"include_usage": True}
    assert streamed.calls[0].key == plain.calls[0].key


def test_a_stream_without_usage_counts_its_chunks_and_says_so(tmp_path, server, caplog):
    server.usage_text = "null"  # a server that ignores stream_options
    reply = make_client(server.settings(tmp_path)).complete(MESSAGES, purpose="t")
    assert reply.text == "echo: Tell me about kernels."
    assert (reply.tokens_in, reply.tokens_out) == (5, 5)  # words estimated; a chunk a word
    assert "streams no usage" in caplog.text


def test_a_stream_cut_short_is_asked_again_then_fails(tmp_path, server):
    from llm_server import Faults

    server.faults = Faults(rate=1.0, kinds=("truncated",))
    llm = make_client(server.settings(tmp_path).with_overrides({"llm": {"retries": 1}}))
    with pytest.raises(LLMError, match="cut short"):
        llm.complete(MESSAGES, purpose="t")
    assert len(server.requests) == 2


def test_the_progress_line_moves_while_one_streamed_request_is_under_way(tmp_path, server):
    """A 3 s reply, a word every 0.05 s: while it streams, the line counts it in flight and
    its tokens grow; with no unit finished the time left is estimated, never counted up."""
    server.chunk_s = 0.05
    server.respond = lambda prompt, n: "word " * 60
    llm = make_client(server.settings(tmp_path))
    with StageProgress(StageReport("generate", "r1"), 1) as progress:
        call = threading.Thread(target=llm.complete, args=(MESSAGES,), kwargs={"purpose": "t"})
        call.start()
        lines = []
        while call.is_alive():
            lines.append(progress._line())
            time.sleep(0.2)
        call.join()
    # Counted per process: a thread another test left behind may be in flight too.
    under_way = [line for line in lines if " in flight" in line]
    assert len(set(under_way)) >= 3, lines  # it moved while the one unit was under way
    assert all("estimating the time left" in line for line in lines), lines


def test_a_hang_up_ends_a_streamed_request_at_once(tmp_path, server):
    """What a stop does to the requests in flight (tasks/lifetime.py runs `hang_up`): the
    reply would take 60 s; the thread reading it is free within seconds, and the server
    sees the client gone."""
    server.chunk_s = 0.5
    server.respond = lambda prompt, n: "word " * 120
    llm = make_client(server.settings(tmp_path))
    failed: list[BaseException] = []

    def ask() -> None:
        try:
            llm.complete(MESSAGES, purpose="t")
        except BaseException as exc:  # noqa: BLE001 (what the hang-up broke, looked at below)
            failed.append(exc)

    call = threading.Thread(target=ask)
    call.start()
    while not server.answered:  # the server has the request and is streaming its reply
        time.sleep(0.05)
    time.sleep(0.5)
    hang_up()
    call.join(15)
    assert not call.is_alive()
    assert failed and isinstance(failed[0], LLMError)  # not a stop here: a failed call
    deadline = time.monotonic() + 5
    while not server.hung_up and time.monotonic() < deadline:
        time.sleep(0.05)
    assert server.hung_up
