"""A local stand-in for an OpenAI-compatible chat endpoint (tests only; never the network).

``ChatMock(script, default, key)`` serves ``POST /v1/chat/completions`` on 127.0.0.1 (an
ephemeral port; ``mock.url`` is the base URL, ending in /v1). Each request consumes the next
action of ``script`` (then repeats ``default``):
- ``("ok", text)``: a chat completion whose message content is ``text``;
- ``("status", code)``: an error answer with that HTTP status (``Retry-After: 0``);
- ``("sleep", seconds, text)``: answer ``text`` only after sleeping (to provoke a client timeout);
- ``("raw", bytes)``: a 200 answer with this body (garbage).
With ``key`` set, a request without ``Authorization: Bearer <key>`` gets 401, and the error
message echoes what was sent (as some servers do), so tests can check the client redacts it.
With ``echo=True`` a successful answer echoes the Authorization header's credentials too: as a
line of ``content`` (alone and inside a name), as ``model`` and in ``system_fingerprint``.
Every request is recorded (``mock.requests``: path, headers, parsed JSON body).
"""

from __future__ import annotations

import json
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any


def completion(text: str, model: str = "mock-model") -> dict[str, Any]:
    return {
        "id": "chatcmpl-mock",
        "object": "chat.completion",
        "created": 0,
        "model": model,
        "system_fingerprint": "fp_mock",
        "choices": [{"index": 0, "finish_reason": "stop", "message": {"role": "assistant", "content": text}}],
        "usage": {"prompt_tokens": 1, "completion_tokens": 1, "total_tokens": 2},
    }


class ChatMock:
    def __init__(self, script=(), default=("ok", ""), key: str | None = None, echo: bool = False):
        self.script = list(script)
        self.echo = echo
        self.default = default
        self.key = key
        self.requests: list[dict[str, Any]] = []
        self._lock = threading.Lock()
        mock = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *a):  # keep test output clean
                pass

            def do_POST(self):
                n = int(self.headers.get("Content-Length") or 0)
                body = self.rfile.read(n)
                try:
                    parsed = json.loads(body)
                except ValueError:
                    parsed = None
                with mock._lock:
                    mock.requests.append({"path": self.path, "headers": dict(self.headers), "body": parsed})
                    action = mock.script.pop(0) if mock.script else mock.default
                if self.path.split("?")[0] != "/v1/chat/completions":  # a query string is the client's
                    return self._send(404, json.dumps({"error": {"message": "no such route"}}).encode())
                auth = self.headers.get("Authorization", "")
                if mock.key and auth != f"Bearer {mock.key}":
                    msg = {"error": {"message": f"Incorrect API key provided: {auth[7:]}"}}
                    return self._send(401, json.dumps(msg).encode())
                self._act(action)

            def _act(self, action):
                kind = action[0]
                if kind == "ok" and mock.echo:
                    cred = self.headers.get("Authorization", "").partition(" ")[2]
                    answer = completion(f"{action[1]}\n{cred}\n9. Zorb{cred}land\n", model=cred)
                    answer["system_fingerprint"] = f"fp_{cred}"
                    self._send(200, json.dumps(answer).encode())
                elif kind == "ok":
                    self._send(200, json.dumps(completion(action[1])).encode())
                elif kind == "status":
                    self._send(
                        action[1],
                        json.dumps({"error": {"message": f"mock status {action[1]}"}}).encode(),
                        {"Retry-After": "0"},
                    )
                elif kind == "sleep":
                    time.sleep(action[1])
                    self._send(200, json.dumps(completion(action[2])).encode())
                elif kind == "raw":
                    self._send(200, action[1])

            def _send(self, code: int, data: bytes, headers: dict | None = None):
                try:
                    self.send_response(code)
                    self.send_header("Content-Type", "application/json")
                    self.send_header("Content-Length", str(len(data)))
                    for k, v in (headers or {}).items():
                        self.send_header(k, v)
                    self.end_headers()
                    self.wfile.write(data)
                except (BrokenPipeError, ConnectionResetError):
                    pass  # the client gave up (timeout tests)

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.server.daemon_threads = True
        self.server.handle_error = lambda *a: None
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}/v1"
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)
        self.thread.start()

    def close(self) -> None:
        self.server.shutdown()
        self.server.server_close()

    def __enter__(self) -> ChatMock:
        return self

    def __exit__(self, *exc) -> None:
        self.close()
