"""A real HTTP server on 127.0.0.1 (an ephemeral port) that records every request."""

from __future__ import annotations

import json
import socket
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any, Callable, NamedTuple, Optional

REPO_ROOT = Path(__file__).resolve().parents[4]
VECTORS = REPO_ROOT / "test" / "vectors" / "webhook-signatures.json"


class Recorded(NamedTuple):
    method: str
    path: str
    headers: dict[str, str]
    body: bytes

    def json(self) -> Any:
        return json.loads(self.body)


class Reply(NamedTuple):
    status: int
    body: bytes = b""
    headers: dict[str, str] = {}


def json_reply(status: int, body: Any, headers: Optional[dict[str, str]] = None) -> Reply:
    return Reply(status, json.dumps(body).encode("utf-8"), {"Content-Type": "application/json", **(headers or {})})


Handler = Callable[[Recorded], Reply]


def always(reply: Reply) -> Handler:
    return lambda request: reply


class TestServer:
    def __init__(self) -> None:
        self.requests: list[Recorded] = []
        self.handler: Handler = lambda request: json_reply(404, {"error": "no such route", "code": "NOT_FOUND", "hint": "Set a handler."})
        self.release = threading.Event()
        server = self

        class RequestHandler(BaseHTTPRequestHandler):
            def _handle(self) -> None:
                length = int(self.headers.get("Content-Length") or 0)
                body = self.rfile.read(length) if length else b""
                recorded = Recorded(self.command, self.path, {k.lower(): v for k, v in self.headers.items()}, body)
                server.requests.append(recorded)
                reply = server.handler(recorded)
                try:
                    self.send_response(reply.status)
                    for name, value in reply.headers.items():
                        self.send_header(name, value)
                    self.send_header("Content-Length", str(len(reply.body)))
                    self.end_headers()
                    self.wfile.write(reply.body)
                except ConnectionError:
                    pass  # the client gave up waiting (the timeout tests)

            do_GET = _handle
            do_POST = _handle
            do_PUT = _handle
            do_DELETE = _handle

            def log_message(self, format: str, *args: Any) -> None:
                pass

        self._httpd = ThreadingHTTPServer(("127.0.0.1", 0), RequestHandler)
        self._httpd.daemon_threads = True
        self.base_url = f"http://127.0.0.1:{self._httpd.server_address[1]}"
        self._thread = threading.Thread(target=self._httpd.serve_forever, args=(0.05,), daemon=True)
        self._thread.start()

    @property
    def last(self) -> Recorded:
        return self.requests[-1]

    def close(self) -> None:
        self.release.set()
        self._httpd.shutdown()
        self._httpd.server_close()
        self._thread.join()


def closed_port() -> int:
    """A port on 127.0.0.1 that nothing listens on (bound, then released)."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port: int = sock.getsockname()[1]
    return port
