"""The low-level layer: one JSON request to a coordinator cluster.

It behaves like the Go client (``sdk/client``):

* any configured address may serve a call; the transport starts with the
  first, moves to the next when one cannot be reached, has no leader
  (``503 no_leader``) or redirects (``421 not_leader``), and sticks to the
  leader an answer named;
* a read, or a write marked idempotent, is resent after any transport
  failure; a write that is not idempotent is resent only where it cannot
  have reached a coordinator (the connection was refused or never made)
  or was answered "not applied"; otherwise the caller gets
  ``outcome_unknown``;
* ``429 rate_limited`` is waited out (``Retry-After``), and the pause
  between two tries grows from 50 ms to at most 250 ms; the whole call
  gives up once ``retry_wait`` seconds have passed;
* every request carries ``X-GpuLayer-Protocol: 1``.

Each try uses a connection of its own, so a coordinator that stopped is
always a refused dial (safe to resend anywhere), never a pooled
connection that breaks after the request was written.
"""

from __future__ import annotations

import http.client
import json
import socket
import ssl
import threading
import time
import urllib.parse
from dataclasses import dataclass, field
from typing import Any, Dict, Iterator, List, Mapping, Optional, Sequence, Tuple, Union

from . import errors
from ._version import __version__
from .errors import Error

PROTOCOL_HEADER = "X-GpuLayer-Protocol"
PROTOCOL_VERSION = "1"
OUTCOME_HEADER = "X-GpuLayer-Outcome"
STREAM_END_TRAILER = "X-Gpulayer-Stream-End"

# Pause between tries after the second: doubled each time up to the cap
# (a new leader takes office in about a second on a LAN).
FIRST_BACKOFF = 0.05
MAX_BACKOFF = 0.25
# How long a dial may take before the next address is tried: a
# coordinator that died does not answer a dial at all.
CONNECT_TIMEOUT = 2.0
# Bounds how much of an error answer is read.
MAX_ERROR_BODY = 1 << 20
# Bounds one line of a streamed answer (a log entry).
MAX_LINE = 8 << 20

Query = Mapping[str, Union[str, int, None]]


def normalize_addresses(addresses: Union[str, Sequence[str]]) -> List[str]:
    """Splits comma-separated addresses, adds ``http://`` where no scheme
    is given and drops trailing slashes."""
    if isinstance(addresses, str):
        addresses = [addresses]
    out: List[str] = []
    for a in addresses:
        for part in a.split(","):
            part = part.strip()
            if not part:
                continue
            if "://" not in part:
                part = "http://" + part
            out.append(part.rstrip("/"))
    return out


@dataclass
class Response:
    """A whole 2xx answer."""

    status: int
    headers: Dict[str, str]
    body: bytes

    def json(self) -> Any:
        if not self.body:
            return None
        return json.loads(self.body)


class StreamCut(Exception):
    """A streamed answer ended before its end (internal)."""


class Stream:
    """A 2xx answer read line by line as it arrives.

    It decodes HTTP/1.1 chunked framing itself so that the trailers the
    coordinator sends after the last chunk (``X-Gpulayer-Stream-End``)
    can be read; ``http.client`` drops them. Iterating yields lines
    without their newline; a connection that breaks before the end
    raises :class:`StreamCut`.
    """

    def __init__(self, conn: http.client.HTTPConnection, resp: http.client.HTTPResponse) -> None:
        self._conn = conn
        self._resp = resp
        self.trailers: Dict[str, str] = {}
        self.complete = False

    def __enter__(self) -> "Stream":
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def close(self) -> None:
        self._resp.close()
        self._conn.close()

    def lines(self) -> Iterator[bytes]:
        buf = b""
        for chunk in self._chunks():
            buf += chunk
            while True:
                nl = buf.find(b"\n")
                if nl < 0:
                    break
                line, buf = buf[:nl], buf[nl + 1:]
                if line.strip():
                    yield line
            if len(buf) > MAX_LINE:
                raise StreamCut(f"a line longer than {MAX_LINE} bytes")
        if buf.strip():
            yield buf

    def _chunks(self) -> Iterator[bytes]:
        resp = self._resp
        try:
            if not resp.chunked:
                while True:
                    data = resp.read1(64 << 10)
                    if not data:
                        if resp.length:
                            raise StreamCut("the answer ended early")
                        self.complete = True
                        return
                    yield data
            fp = resp.fp
            while True:
                size_line = fp.readline(1024)
                if not size_line.endswith(b"\n"):
                    raise StreamCut("the connection closed mid-stream")
                size = int(size_line.split(b";", 1)[0].strip(), 16)
                if size == 0:
                    break
                data = fp.read(size)
                if len(data) != size or fp.read(2) != b"\r\n":
                    raise StreamCut("the connection closed mid-chunk")
                yield data
            while True:
                line = fp.readline(8192)
                if not line.endswith(b"\n"):
                    raise StreamCut("the connection closed in the trailers")
                if not line.strip():
                    break
                name, _, value = line.decode("latin-1").partition(":")
                self.trailers[name.strip().lower()] = value.strip()
            self.complete = True
        except (OSError, ValueError, http.client.HTTPException) as exc:
            raise StreamCut(str(exc) or type(exc).__name__) from None

    def trailer(self, name: str) -> str:
        return self.trailers.get(name.lower(), "")


@dataclass
class _Tries:
    """What each address said, for the error of a call that gave up."""

    said: Dict[str, str] = field(default_factory=dict)

    def fail(self, base: str, why: str) -> None:
        self.said[base] = why

    def summary(self) -> str:
        return "; ".join(f"{a}: {w}" for a, w in self.said.items())


@dataclass
class _Request:
    method: str
    path: str
    payload: Optional[bytes]
    headers: Dict[str, str]
    idempotent: bool
    whole: bool

    @property
    def safe(self) -> bool:
        """Whether it may be sent again after it may have arrived."""
        return self.method == "GET" or self.idempotent

    def lost(self, base: str, why: str) -> Exception:
        """The error for a request that may have reached ``base`` but got
        no whole answer: try again if that is safe, else say so."""
        if self.safe:
            return _TryAgain(why)
        return Error(
            errors.OUTCOME_UNKNOWN,
            f"{self.method} {self.path}: the request reached {base} but its answer was lost "
            f"({why}); it may or may not have been applied",
        )


class _TryAgain(Exception):
    """One try failed in a way another try may not (internal)."""

    def __init__(self, why: str, *, leader: str = "", wait: float = 0.0, error: Optional[Error] = None) -> None:
        super().__init__(why)
        self.why = why
        self.leader = leader
        self.wait = wait
        self.error = error


class Transport:
    """Sends requests to a coordinator cluster with failover and retries.

    Safe to share between threads.
    """

    def __init__(
        self,
        addresses: Union[str, Sequence[str]],
        token: str,
        *,
        ca_file: Optional[str] = None,
        client_cert: Optional[str] = None,
        client_key: Optional[str] = None,
        timeout: float = 30.0,
        retry_wait: float = 30.0,
        connect_timeout: float = CONNECT_TIMEOUT,
    ) -> None:
        self._addrs = normalize_addresses(addresses)
        if not self._addrs:
            raise Error(errors.INVALID_ARGUMENT, "no coordinator address")
        self._token = token
        self._timeout = timeout
        self._retry_wait = retry_wait
        self._connect_timeout = min(connect_timeout, timeout)
        self._lock = threading.Lock()
        self._cur = 0
        self._leader = ""
        self._tls_files = (ca_file, client_cert, client_key)
        self._tls: Optional[ssl.SSLContext] = None
        if ca_file or client_cert or client_key or any(a.startswith("https://") for a in self._addrs):
            self._tls = _tls_context(*self._tls_files)

    @property
    def addresses(self) -> List[str]:
        return list(self._addrs)

    def __repr__(self) -> str:
        return f"Transport(addresses={self._addrs!r})"

    # -- choosing an address ------------------------------------------------

    def _base(self) -> str:
        with self._lock:
            if self._leader:
                return self._leader
            return self._addrs[self._cur % len(self._addrs)]

    def _rotate(self, failed: str) -> None:
        with self._lock:
            if self._leader == failed:
                self._leader = ""
            if self._addrs[self._cur % len(self._addrs)] == failed:
                self._cur += 1

    def _set_leader(self, addr: str) -> None:
        norm = normalize_addresses(addr)
        with self._lock:
            self._leader = norm[0] if norm else ""

    # -- requests -----------------------------------------------------------

    def request(
        self,
        method: str,
        path: str,
        body: Any = None,
        *,
        query: Optional[Query] = None,
        idempotent: bool = False,
    ) -> Response:
        """Sends one JSON request and returns its 2xx answer, whole.

        ``body`` is encoded as JSON (``None``: no body; ``bytes``: sent as
        they are). ``idempotent``
        marks a write that is safe to resend after any failure.
        """
        conn, resp, data = self._send(method, path, body, query, idempotent, whole=True)
        headers = {k.lower(): v for k, v in resp.getheaders()}
        resp.close()
        conn.close()
        return Response(resp.status, headers, data)

    def stream(
        self,
        method: str,
        path: str,
        body: Any = None,
        *,
        query: Optional[Query] = None,
        idempotent: bool = False,
    ) -> Stream:
        """Opens a 2xx answer to read as it arrives: no timeout bounds its
        reads once it is open. Close it (or use it as a context manager)."""
        conn, resp, _ = self._send(method, path, body, query, idempotent, whole=False)
        if conn.sock is not None:
            conn.sock.settimeout(None)
        return Stream(conn, resp)

    def _send(
        self,
        method: str,
        path: str,
        body: Any,
        query: Optional[Query],
        idempotent: bool,
        *,
        whole: bool,
    ) -> Tuple[http.client.HTTPConnection, http.client.HTTPResponse, bytes]:
        """Tries address after address until a 2xx answer, a refusal, or
        the retry budget is spent. With ``whole`` the answer's body is read
        within the try, so that a read cut short is sent again."""
        if query:
            q = {k: str(v) for k, v in query.items() if v is not None and v != ""}
            if q:
                path += "?" + urllib.parse.urlencode(q)
        raw = isinstance(body, (bytes, bytearray))
        payload = bytes(body) if raw else None if body is None else json.dumps(body, separators=(",", ":")).encode()
        req = _Request(method, path, payload, self._headers(payload is not None, raw), idempotent, whole)
        deadline = time.monotonic() + self._retry_wait
        backoff = FIRST_BACKOFF
        tries = _Tries()
        attempt = 0
        while True:
            base = self._base()
            try:
                return self._try(base, req)
            except Error as err:
                raise self._scrub(err) from None
            except _TryAgain as again:
                tries.fail(base, again.why)
                if again.leader:
                    self._set_leader(again.leader)
                elif again.wait == 0:
                    self._rotate(base)
                if again.wait > 0:
                    if again.error is not None and time.monotonic() + again.wait > deadline:
                        raise self._scrub(again.error) from None
                    time.sleep(again.wait)
                    continue
            if time.monotonic() >= deadline:
                raise self._scrub(
                    Error(
                        errors.UNAVAILABLE,
                        f"{method} {path}: no coordinator could serve it within {self._retry_wait:g} s: {tries.summary()}",
                    )
                )
            if attempt > 0:
                time.sleep(min(backoff, max(deadline - time.monotonic(), 0)))
                backoff = min(backoff * 2, MAX_BACKOFF)
            attempt += 1

    def _headers(self, has_body: bool, raw: bool = False) -> Dict[str, str]:
        headers = {
            PROTOCOL_HEADER: PROTOCOL_VERSION,
            "Accept": "application/json",
            "User-Agent": f"gpulayer-python/{__version__}",
        }
        if self._token:
            headers["Authorization"] = "Bearer " + self._token
        if has_body:
            headers["Content-Type"] = "application/octet-stream" if raw else "application/json"
        return headers

    def _try(self, base: str, req: "_Request") -> Tuple[http.client.HTTPConnection, http.client.HTTPResponse, bytes]:
        """One try at one address. Raises :class:`_TryAgain` where another
        try may do better, :class:`Error` where it may not."""
        conn = self._connection(base)
        try:
            conn.connect()
            if conn.sock is not None:
                conn.sock.settimeout(self._timeout)
        except ssl.SSLCertVerificationError as exc:
            conn.close()
            # Another try will not change a certificate.
            raise Error(errors.UNAVAILABLE, f"{base}: TLS: {exc.verify_message or exc}") from None
        except OSError as exc:
            # Nothing was sent: safe to send elsewhere, whatever it is.
            conn.close()
            raise _TryAgain(_describe(exc)) from None
        try:
            conn.request(req.method, req.path, body=req.payload, headers=req.headers)
            resp = conn.getresponse()
            if 200 <= resp.status < 300:
                data = resp.read() if req.whole else b""
                return conn, resp, data
        except (OSError, http.client.HTTPException) as exc:
            conn.close()
            # The request may have reached the coordinator.
            raise req.lost(base, _describe(exc)) from None
        err = _read_error(resp)
        conn.close()
        if err is None:
            raise req.lost(base, f"the HTTP {resp.status} answer was cut short")
        if resp.getheader(OUTCOME_HEADER, "") == "unknown" and not req.idempotent:
            # It may have been applied: resending could apply it twice.
            err.outcome_unknown = True
            raise err
        if err.code == errors.NOT_LEADER:
            leader = err.leader if err.leader and normalize_addresses(err.leader) != [base] else ""
            raise _TryAgain(str(err), leader=leader)
        if err.code == errors.NO_LEADER:
            raise _TryAgain(str(err))
        if err.code == errors.RATE_LIMITED:
            raise _TryAgain(str(err), wait=float(max(err.retry_after or 1, 1)), error=err)
        raise err

    def _connection(self, base: str) -> http.client.HTTPConnection:
        u = urllib.parse.urlsplit(base)
        host = u.hostname or ""
        if u.scheme == "https":
            if self._tls is None:  # a leader's https address, the others http
                self._tls = _tls_context(*self._tls_files)
            return http.client.HTTPSConnection(host, u.port, timeout=self._connect_timeout, context=self._tls)
        if u.scheme != "http":
            raise Error(errors.INVALID_ARGUMENT, f"address {base!r}: the scheme must be http or https")
        return http.client.HTTPConnection(host, u.port, timeout=self._connect_timeout)

    def _scrub(self, err: Error) -> Error:
        """Removes the token from an error's text, should any part of the
        path have carried it there."""
        if self._token and self._token in err.message:
            err.message = err.message.replace(self._token, "[token]")
            err.args = (err.code, err.message)
        return err


def _read_error(resp: http.client.HTTPResponse) -> Optional[Error]:
    """Decodes an error answer; ``None`` when it could not be read whole
    (the connection broke). A whole answer that is not the protocol's
    error (a proxy's page) becomes ``internal``, quoting it."""
    try:
        raw = resp.read(MAX_ERROR_BODY)
    except (OSError, http.client.HTTPException):
        return None
    retry_after: Optional[int] = None
    ra = resp.getheader("Retry-After")
    if ra and ra.strip().isdigit():
        retry_after = int(ra.strip())
    try:
        doc = json.loads(raw)
        e = doc["error"]
        return Error(
            str(e["code"]),
            str(e.get("message", "")),
            status=resp.status,
            request_id=str(e.get("request_id", "")),
            leader=str(e.get("leader", "")),
            retry_after=retry_after,
        )
    except (ValueError, KeyError, TypeError):
        text = raw.decode("utf-8", "replace").strip()[:500]
        return Error(
            errors.INTERNAL,
            f"HTTP {resp.status}: {text}",
            status=resp.status,
            request_id=resp.getheader("X-Request-Id", "") or "",
            retry_after=retry_after,
        )


def _describe(exc: BaseException) -> str:
    if isinstance(exc, ConnectionRefusedError):
        return "connection refused"
    if isinstance(exc, (socket.timeout, TimeoutError)):
        return "timed out"
    text = str(exc)
    return f"{type(exc).__name__}: {text}" if text else type(exc).__name__


def _tls_context(ca_file: Optional[str], client_cert: Optional[str], client_key: Optional[str]) -> ssl.SSLContext:
    ctx = ssl.create_default_context()
    ctx.minimum_version = ssl.TLSVersion.TLSv1_2
    if ca_file:
        # Trusted besides the system roots, as the Go client does.
        try:
            ctx.load_verify_locations(cafile=ca_file)
        except (OSError, ssl.SSLError) as exc:
            raise Error(errors.INVALID_ARGUMENT, f"CA file {ca_file}: {exc}") from None
    if (client_cert is None) != (client_key is None):
        raise Error(errors.INVALID_ARGUMENT, "a client certificate needs its key, and the key its certificate")
    if client_cert and client_key:
        try:
            ctx.load_cert_chain(client_cert, client_key)
        except (OSError, ssl.SSLError) as exc:
            raise Error(errors.INVALID_ARGUMENT, f"client certificate {client_cert}: {exc}") from None
    return ctx
