"""Network stand-ins around the real coordinator, for the failure paths a
single healthy `gpulayer dev` never shows: an address nothing listens on,
a coordinator that answers every request with a fixed refusal (a
follower without a leader, say), and a proxy that loses or cuts answers
after passing the request on.
"""

from __future__ import annotations

import json
import re
import socket
import ssl
import threading
import urllib.parse
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Callable, Dict, List, Optional, Tuple


def closed_address() -> str:
    """A loopback URL whose port nothing listens on (connections are
    refused)."""
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    port = s.getsockname()[1]
    s.close()
    return f"http://127.0.0.1:{port}"


@dataclass
class Seen:
    method: str
    path: str
    headers: Dict[str, str]
    body: bytes


Answer = Tuple[int, Dict[str, str], bytes]


@dataclass
class _Rule:
    kind: str  # "drop" or "cut"
    method: str
    prefix: str
    left: int
    after: bytes = b""


def error_answer(status: int, code: str, message: str, *, leader: str = "", headers: Optional[Dict[str, str]] = None) -> Answer:
    err: Dict[str, str] = {"code": code, "message": message, "request_id": "stub"}
    if leader:
        err["leader"] = leader
    h = {"Content-Type": "application/json"}
    h.update(headers or {})
    return status, h, json.dumps({"error": err}).encode()


def json_answer(status: int, doc: object) -> Answer:
    return status, {"Content-Type": "application/json"}, json.dumps(doc).encode()


class Stub:
    """An HTTP server that records every request and answers each with
    what ``answer`` returns for it; HTTPS with a ``tls`` server context."""

    def __init__(self, answer: Callable[[Seen], Answer], tls: Optional[ssl.SSLContext] = None) -> None:
        self.seen: List[Seen] = []
        stub = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def _serve(self) -> None:
                n = int(self.headers.get("Content-Length") or 0)
                body = self.rfile.read(n) if n else b""
                req = Seen(self.command, self.path, {k.lower(): v for k, v in self.headers.items()}, body)
                stub.seen.append(req)
                status, headers, payload = answer(req)
                self.send_response(status)
                for k, v in headers.items():
                    self.send_header(k, v)
                self.send_header("Content-Length", str(len(payload)))
                self.end_headers()
                self.wfile.write(payload)

            do_GET = do_POST = do_PATCH = do_DELETE = do_PUT = _serve

            def log_message(self, *args: object) -> None:
                pass

        self._server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self._server.daemon_threads = True
        scheme = "http"
        if tls is not None:
            self._server.socket = tls.wrap_socket(self._server.socket, server_side=True)
            scheme = "https"
        self.url = f"{scheme}://127.0.0.1:{self._server.server_address[1]}"
        # A short poll interval: close() returns within it.
        threading.Thread(target=self._server.serve_forever, args=(0.02,), daemon=True).start()

    def close(self) -> None:
        self._server.shutdown()
        self._server.server_close()


class Proxy:
    """A TCP proxy to a coordinator that reads each request whole, passes
    it on, and relays the answer, except where a rule says otherwise:

    * ``drop(method, path_prefix, n)``: the next n matching requests are
      passed on and answered by the coordinator, but the answer is thrown
      away and the client's connection closed (a lost answer);
    * ``cut(method, path_prefix, after, n)``: the next n matching answers
      are relayed until they hold the bytes ``after``, then the connection
      is closed (a stream cut midway);
    * ``strip_trailers``: chunked answers lose their trailers, as through
      a proxy that does not forward them.
    """

    def __init__(self, upstream: str) -> None:
        u = urllib.parse.urlsplit(upstream)
        self._up = (u.hostname or "127.0.0.1", u.port or 80)
        self.seen: List[Seen] = []
        self._rules: List[_Rule] = []
        self._lock = threading.Lock()
        self._sock = socket.socket()
        self._sock.bind(("127.0.0.1", 0))
        self._sock.listen(64)
        self.url = f"http://127.0.0.1:{self._sock.getsockname()[1]}"
        self._closed = False
        self.strip_trailers = False
        threading.Thread(target=self._accept, daemon=True).start()

    def drop(self, method: str, prefix: str, n: int = 1) -> None:
        with self._lock:
            self._rules.append(_Rule("drop", method, prefix, n))

    def cut(self, method: str, prefix: str, after: bytes, n: int = 1) -> None:
        with self._lock:
            self._rules.append(_Rule("cut", method, prefix, n, after))

    def requests(self, method: str, prefix: str) -> List[Seen]:
        with self._lock:
            return [s for s in self.seen if s.method == method and s.path.startswith(prefix)]

    def close(self) -> None:
        self._closed = True
        self._sock.close()

    def _rule(self, method: str, path: str) -> Optional[_Rule]:
        with self._lock:
            for r in self._rules:
                if r.method == method and path.startswith(r.prefix) and r.left > 0:
                    r.left -= 1
                    return r
        return None

    def _accept(self) -> None:
        while not self._closed:
            try:
                client, _ = self._sock.accept()
            except OSError:
                return
            threading.Thread(target=self._serve, args=(client,), daemon=True).start()

    def _serve(self, client: socket.socket) -> None:
        with client:
            head, body = _read_request(client)
            if head is None:
                return
            lines = head.decode("latin-1").split("\r\n")
            method, path, _ = lines[0].split(" ", 2)
            headers = {}
            for line in lines[1:]:
                k, _, v = line.partition(":")
                headers[k.strip().lower()] = v.strip()
            with self._lock:
                self.seen.append(Seen(method, path, headers, body))
            rule = self._rule(method, path)
            # One request per connection: the coordinator closes after it.
            kept = [line for line in lines[1:] if line and not line.lower().startswith("connection:")]
            out = "\r\n".join([lines[0], *kept, "Connection: close", "", ""]).encode("latin-1") + body
            with socket.create_connection(self._up) as up:
                up.sendall(out)
                relayed = b""
                while True:
                    data = up.recv(65536)
                    if not data:
                        break
                    if rule and rule.kind == "drop":
                        continue
                    if self.strip_trailers:
                        data = _TRAILERS.sub(b"0\r\n\r\n", data)
                    client.sendall(data)
                    relayed += data
                    if rule and rule.kind == "cut" and rule.after in relayed:
                        return


# The last chunk and the trailers after it (the proxy sees them in one
# piece: the coordinator writes them at once, at the end).
_TRAILERS = re.compile(rb"(?:^|(?<=\r\n))0\r\n(?:[A-Za-z0-9-]+: [^\r\n]*\r\n)+\r\n$")


def _read_request(sock: socket.socket) -> Tuple[Optional[bytes], bytes]:
    buf = b""
    while b"\r\n\r\n" not in buf:
        data = sock.recv(65536)
        if not data:
            return None, b""
        buf += data
    head, _, rest = buf.partition(b"\r\n\r\n")
    n = 0
    for line in head.split(b"\r\n")[1:]:
        k, _, v = line.partition(b":")
        if k.strip().lower() == b"content-length":
            n = int(v.strip())
    while len(rest) < n:
        data = sock.recv(65536)
        if not data:
            break
        rest += data
    return head, rest
