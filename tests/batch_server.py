"""A loopback OpenAI Batch API on 127.0.0.1: /v1/files, /v1/files/{id}/content,
/v1/batches and /v1/batches/{id}, as OpenAI documents them. A batch moves validating ->
in_progress -> finalizing -> completed, one status a poll; `hold` keeps it in_progress;
`mode` "expired" or "failed" ends it so, and "partial" answers the requests whose prompt
holds "fail" in the error file instead of the output file; `respond(prompt, n)` is the
reply to a request's last message (an echo unless set)."""

from __future__ import annotations

import email.parser
import email.policy
import itertools
import json
import threading
import time
from collections import Counter
from collections.abc import Callable
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

_STEPS = ("validating", "in_progress", "finalizing", "completed")


class BatchServer(ThreadingHTTPServer):
    def __init__(self) -> None:
        super().__init__(("127.0.0.1", 0), _Handler)
        self.files: dict[str, dict[str, Any]] = {}
        self.batches: dict[str, dict[str, Any]] = {}
        self.counts: Counter[str] = Counter()  # "POST /v1/batches" and the like
        self.hold = False
        self.mode = "completed"
        self.ids = itertools.count(1)
        self.respond: Callable[[str, int], str] = lambda prompt, n: f"echo: {prompt}"
        self.answered = 0  # requests the output files answered
        self.lock = threading.Lock()

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self.server_address[1]}/v1"

    def __enter__(self) -> BatchServer:
        threading.Thread(target=self.serve_forever, daemon=True).start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.shutdown()
        self.server_close()

    def add_file(self, content: str, purpose: str) -> dict[str, Any]:
        file_id = f"file-{next(self.ids)}"
        self.files[file_id] = {
            "id": file_id,
            "object": "file",
            "bytes": len(content.encode()),
            "created_at": int(time.time()),
            "filename": f"{file_id}.jsonl",
            "purpose": purpose,
            "status": "processed",
            "content": content,
        }
        return self.files[file_id]

    def advance(self, batch: dict[str, Any]) -> None:
        """One poll's step of `batch`; its output and error files once it completes."""
        if batch["status"] in ("completed", "expired", "failed"):
            return
        if self.mode in ("expired", "failed") and batch["status"] == "in_progress":
            batch["status"] = self.mode
            return
        if self.hold and batch["status"] == "in_progress":
            return
        batch["status"] = _STEPS[_STEPS.index(batch["status"]) + 1]
        if batch["status"] != "completed":
            return
        out, errors = [], []
        for raw in self.files[batch["input_file_id"]]["content"].splitlines():
            line = json.loads(raw)
            prompt = line["body"]["messages"][-1]["content"]
            if self.mode == "partial" and "fail" in prompt:
                error = {"code": "server_error", "message": "the model could not answer"}
                errors.append({"id": f"r-{next(self.ids)}", "custom_id": line["custom_id"],
                               "response": None, "error": error})  # fmt: skip
                continue
            text = self.respond(prompt, self.answered)
            self.answered += 1
            body = {
                "id": f"chatcmpl-{next(self.ids)}",
                "object": "chat.completion",
                "model": line["body"]["model"],
                "choices": [{"index": 0, "finish_reason": "stop",
                             "message": {"role": "assistant", "content": text}}],
                "usage": {"prompt_tokens": len(prompt.split()) + 4,
                          "completion_tokens": len(text.split()),
                          "total_tokens": len(prompt.split()) + 4 + len(text.split())},
            }  # fmt: skip
            out.append({"id": f"r-{next(self.ids)}", "custom_id": line["custom_id"],
                        "response": {"status_code": 200, "body": body}, "error": None})  # fmt: skip
        text = "".join(json.dumps(x) + "\n" for x in out)
        batch["output_file_id"] = self.add_file(text, "batch_output")["id"] if out else None
        text = "".join(json.dumps(x) + "\n" for x in errors)
        batch["error_file_id"] = self.add_file(text, "batch_output")["id"] if errors else None


class _Handler(BaseHTTPRequestHandler):
    server: BatchServer

    def log_message(self, *args: object) -> None:
        pass

    def _json(self, payload: dict[str, Any], status: int = 200) -> None:
        data = json.dumps(payload).encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def do_GET(self) -> None:  # noqa: N802 (http.server's naming)
        server, parts = self.server, self.path.strip("/").split("/")
        with server.lock:
            if parts[:2] == ["v1", "batches"] and len(parts) == 3:
                server.counts["GET /v1/batches/{id}"] += 1
                batch = server.batches.get(parts[2])
                if batch is None:
                    return self._json({"error": {"message": "no such batch"}}, 404)
                server.advance(batch)
                return self._json(batch)
            if parts[:2] == ["v1", "files"] and len(parts) == 4 and parts[3] == "content":
                server.counts["GET /v1/files/{id}/content"] += 1
                data = server.files[parts[2]]["content"].encode()
                self.send_response(200)
                self.send_header("Content-Type", "application/octet-stream")
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)
                return None
        return self._json({"error": {"message": "not found"}}, 404)

    def do_POST(self) -> None:  # noqa: N802 (http.server's naming)
        server = self.server
        body = self.rfile.read(int(self.headers.get("Content-Length", 0)))
        with server.lock:
            if self.path == "/v1/files":
                server.counts["POST /v1/files"] += 1
                head = f"Content-Type: {self.headers['Content-Type']}\r\n\r\n".encode()
                form = email.parser.BytesParser(policy=email.policy.HTTP).parsebytes(head + body)
                fields = {p.get_param("name", header="content-disposition"): p
                          for p in form.iter_parts()}  # fmt: skip
                content = fields["file"].get_payload(decode=True).decode()
                purpose = fields["purpose"].get_payload(decode=True).decode()
                made = dict(server.add_file(content, purpose))
                del made["content"]
                return self._json(made)
            if self.path == "/v1/batches":
                server.counts["POST /v1/batches"] += 1
                asked = json.loads(body)
                batch_id = f"batch_{next(server.ids)}"
                server.batches[batch_id] = {
                    "id": batch_id,
                    "object": "batch",
                    "endpoint": asked["endpoint"],
                    "input_file_id": asked["input_file_id"],
                    "completion_window": asked["completion_window"],
                    "status": "validating",
                    "created_at": int(time.time()),
                    "output_file_id": None,
                    "error_file_id": None,
                }
                return self._json(server.batches[batch_id])
        return self._json({"error": {"message": "not found"}}, 404)
