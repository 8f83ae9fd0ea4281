"""The client: one object per cluster, with a namespace per resource.

>>> import gpulayer
>>> gl = gpulayer.Client("http://127.0.0.1:7070", token)   # doctest: +SKIP
>>> job = gl.jobs.submit(gpulayer.JobSpec.command(["sh", "-c", "echo $CUDA_VISIBLE_DEVICES"], gpus=1))  # doctest: +SKIP
>>> for entry in gl.jobs.logs(job.id, follow=True):        # doctest: +SKIP
...     print(entry.data, end="")
>>> gl.jobs.wait(job.id).state                             # doctest: +SKIP
'succeeded'
"""

from __future__ import annotations

import base64
import copy
import datetime as _dt
import json
import os
import secrets
import time
import urllib.parse
from typing import Any, Dict, Generator, Iterator, List, Mapping, Optional, Sequence, Tuple, Union

from . import errors
from .errors import Error
from .models import CreatedToken, ExecResult, GPUs, Job, JobEvents, JobPage, JobSpec, LogEntry, Queue, Reissued, Team, TeamQuota, Token, Usage, Worker
from .transport import STREAM_END_TRAILER, StreamCut, Transport

# Idempotency keys submit makes for a spec without one, as sdk/client
# does: "auto-" and 26 random characters.
AUTO_IDEMPOTENCY_PREFIX = "auto-"
# Page size bound of GET /v1/jobs.
MAX_JOBS_PAGE = 1000
# How a following log stream ended (its trailer).
STREAM_END_JOB_ENDED = "job-ended"
STREAM_END_MAX_LIFE = "max-life"
# Log streams cut in a row, delivering nothing, before logs gives up.
MAX_STREAM_CUTS = 5

TimeArg = Union[str, _dt.datetime, None]


def _seg(value: str) -> str:
    """One path segment, escaped."""
    return urllib.parse.quote(value, safe="")


def _auto_key() -> str:
    return AUTO_IDEMPOTENCY_PREFIX + base64.b32encode(secrets.token_bytes(16)).decode().rstrip("=")


def _time(t: TimeArg) -> Optional[str]:
    if t is None or isinstance(t, str):
        return t
    if t.tzinfo is None:
        raise ValueError("a datetime must be timezone-aware (use datetime.timezone.utc)")
    return t.astimezone(_dt.timezone.utc).strftime("%Y-%m-%dT%H:%M:%S.%f")[:-3] + "Z"


class Client:
    """A GpuLayer cluster.

    Args:
        addresses: one coordinator URL, several, or a comma-separated
            string (``"https://c1:7070,https://c2:7070"``); any will do.
            An address without a scheme is ``http://``.
        token: the bearer credential (a ``glc_`` client token).
        ca_file: a PEM bundle to trust for HTTPS, besides the system roots.
        client_cert, client_key: a PEM certificate and key for
            coordinators that require client certificates.
        timeout: seconds one try waits to connect and for each read of its
            answer before it tries the next address (log streams are not
            bounded).
        retry_wait: seconds a call keeps retrying while no coordinator
            can serve it (down, between leaders, over its rate).

    Safe to share between threads. ``repr`` shows the addresses, never the
    token.
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
    ) -> None:
        self._transport = Transport(
            addresses,
            token,
            ca_file=ca_file,
            client_cert=client_cert,
            client_key=client_key,
            timeout=timeout,
            retry_wait=retry_wait,
        )
        self.jobs = Jobs(self._transport)
        self.tasks = Tasks(self._transport)
        self.teams = Teams(self._transport)
        self.tokens = Tokens(self._transport)
        self.workers = Workers(self._transport)

    @classmethod
    def from_env(cls, environ: Optional[Mapping[str, str]] = None, **kwargs: Any) -> "Client":
        """A client from the variables the CLI reads: ``GPULAYER_ADDR``,
        ``GPULAYER_TOKEN`` and ``GPULAYER_CA_FILE`` (the env file
        ``gpulayer dev --env-file`` writes holds the first two)."""
        env = os.environ if environ is None else environ
        addr = env.get("GPULAYER_ADDR") or "http://127.0.0.1:7070"
        if env.get("GPULAYER_CA_FILE") and "ca_file" not in kwargs:
            kwargs["ca_file"] = env["GPULAYER_CA_FILE"]
        return cls(addr, env.get("GPULAYER_TOKEN", ""), **kwargs)

    @property
    def addresses(self) -> List[str]:
        return self._transport.addresses

    def __repr__(self) -> str:
        return f"Client(addresses={self.addresses!r})"

    def health(self) -> Dict[str, Any]:
        """The health of whichever coordinator answers (no credential)."""
        doc = self._transport.request("GET", "/v1/status/health").json()
        if not isinstance(doc, dict):
            raise Error(errors.INTERNAL, "GET /v1/status/health: the answer is not a JSON object")
        return doc

    def usage(
        self,
        *,
        start: TimeArg = None,
        end: TimeArg = None,
        group_by: Optional[str] = None,
    ) -> Usage:
        """GPU-seconds over ``[start, end)``, grouped by ``team``,
        ``gpu_model``, ``user`` or ``job`` (``GET /v1/usage``). Times are
        RFC 3339 strings or aware datetimes. A read token sees its team;
        an admin sees all."""
        query = {"from": _time(start), "to": _time(end), "group_by": group_by}
        return Usage.from_dict(self._transport.request("GET", "/v1/usage", query=query).json())

    def queue(self, *, team: Optional[str] = None, limit: Optional[int] = None) -> Queue:
        """The order the scheduler serves (``GET /v1/queue``): the teams with
        queued tasks, lowest GPUs in use / weight first, each with its first
        ``limit`` tasks (default 50) and why each waits. A read token sees
        its own team; an admin every team, or ``team``."""
        query = {"team": team, "limit": None if limit is None else str(limit)}
        return Queue.from_dict(self._transport.request("GET", "/v1/queue", query=query).json())


class _Resource:
    def __init__(self, transport: Transport) -> None:
        self._t = transport

    def __repr__(self) -> str:
        return f"{type(self).__name__}()"

    def _json(self, method: str, path: str, body: Any = None, **kw: Any) -> Dict[str, Any]:
        doc = self._t.request(method, path, body, **kw).json()
        if not isinstance(doc, dict):
            raise Error(errors.INTERNAL, f"{method} {path}: the answer is not a JSON object")
        return doc


class Jobs(_Resource):
    """``/v1/jobs``: submit, read, list, cancel, wait for and read the
    logs of jobs."""

    def submit(self, spec: JobSpec) -> Job:
        """Submits a job and answers it as created.

        A spec without an ``idempotency_key`` gets one of its own, so a
        submit whose answer is lost (a leader failing over under it, a
        connection cut) is sent again and lands exactly once: the
        coordinator answers the resend with the job the first one made.
        """
        spec = copy.copy(spec)
        if not spec.idempotency_key:
            spec.idempotency_key = _auto_key()
        doc = self._json("POST", "/v1/jobs", spec.to_dict(), idempotent=True)
        return Job.from_dict(doc["job"])

    def get(self, job_id: str) -> Job:
        return Job.from_dict(self._json("GET", "/v1/jobs/" + _seg(job_id))["job"])

    def events(self, job_id: str) -> JobEvents:
        """The job's history, oldest first: its submission, each attempt's
        assignment, start, preemption (``preempted_by``) and end, the
        checkpoints it saved, its cancellation. Another team's job is
        ``404 not_found``."""
        return JobEvents.from_dict(self._json("GET", "/v1/jobs/" + _seg(job_id) + "/events"))

    def page(self, *, limit: Optional[int] = None, after: Optional[str] = None) -> JobPage:
        """One page of jobs, newest first: at most ``limit`` (default: the
        coordinator's page size) after the cursor ``after``."""
        return JobPage.from_dict(self._json("GET", "/v1/jobs", query={"limit": limit, "after": after}))

    def iter(self, *, page_size: Optional[int] = None) -> Iterator[Job]:
        """Every job, newest first, a page at a time."""
        after = ""
        while True:
            page = self.page(limit=page_size, after=after)
            yield from page.jobs
            if not page.next:
                return
            after = page.next

    def list(self, limit: Optional[int] = None) -> List[Job]:
        """Jobs, newest first: at most ``limit``, or all of them."""
        out: List[Job] = []
        after = ""
        while True:
            size = MAX_JOBS_PAGE if limit is None else min(MAX_JOBS_PAGE, limit - len(out))
            page = self.page(limit=size, after=after)
            out.extend(page.jobs)
            if not page.next or (limit is not None and len(out) >= limit):
                return out[:limit] if limit is not None else out
            after = page.next

    def cancel(self, job_id: str) -> Job:
        """Cancels a job: pending tasks at once, running ones through their
        worker. A job that has ended answers ``409 conflict``."""
        return Job.from_dict(self._json("POST", "/v1/jobs/" + _seg(job_id) + "/cancel", {})["job"])

    def wait(self, job_id: str, *, timeout: Optional[float] = None, poll_interval: float = 1.0) -> Job:
        """Reads the job until it has ended and answers it.

        Polls at growing intervals up to ``poll_interval`` seconds. Past
        ``timeout`` seconds it raises :class:`Error` with code
        ``timeout``; the job goes on.
        """
        deadline = None if timeout is None else time.monotonic() + timeout
        pause = min(0.05, poll_interval)
        while True:
            job = self.get(job_id)
            if job.done:
                return job
            if deadline is not None:
                left = deadline - time.monotonic()
                if left <= 0:
                    raise Error(errors.TIMEOUT, f"job {job_id} is still {job.state} after {timeout:g} s")
                pause = min(pause, left)
            time.sleep(pause)
            pause = min(pause * 2, poll_interval)

    def logs(self, job_id: str, *, follow: bool = False) -> Iterator[LogEntry]:
        """The job's output, entry by entry, in order per task.

        Without ``follow`` it is what is stored now. With ``follow`` the
        iterator goes on until the job has ended and every entry was
        delivered. A stream that a coordinator ends at its maximum life,
        or that is cut (its coordinator failed), is opened again, through
        whichever coordinator answers, skipping per task the entries
        already delivered; after five cuts in a row that delivered
        nothing it raises ``unavailable``. Closing the iterator (or
        leaving a ``for`` loop) closes the connection.
        """
        seen: Dict[str, int] = {}
        cuts = 0
        while True:
            end, delivered, cut = yield from self._logs_once(job_id, follow, seen)
            if not follow:
                if cut:
                    raise Error(errors.UNAVAILABLE, f"the log stream of job {job_id} was cut: {cut}")
                return
            if not cut and not end and self.get(job_id).done:
                # A whole stream without its trailer: a proxy on the way
                # may drop trailers. The job has ended, so what it has not
                # delivered yet (had it ended at its maximum life) is all
                # stored: read the rest once and stop.
                yield from self._logs_rest(job_id, seen)
                return
            if cut or not end:
                cuts = 0 if delivered else cuts
                cuts += 1
                if cuts > MAX_STREAM_CUTS:
                    why = cut or "it ended without its end trailer"
                    raise Error(errors.UNAVAILABLE, f"the log stream of job {job_id} was cut {cuts} times in a row: {why}")
            elif end != STREAM_END_MAX_LIFE:
                return

    def _logs_rest(self, job_id: str, seen: Dict[str, int]) -> Iterator[LogEntry]:
        """The stored entries past the first ``seen[task_id]`` of each task
        (updated as entries are delivered)."""
        _, _, cut = yield from self._logs_once(job_id, False, seen)
        if cut:
            raise Error(errors.UNAVAILABLE, f"the log stream of job {job_id} was cut: {cut}")

    def _logs_once(
        self, job_id: str, follow: bool, seen: Dict[str, int]
    ) -> Generator[LogEntry, None, Tuple[str, int, str]]:
        """Reads one stream, skipping per task the first ``seen[task]``
        entries; returns (how it ended, entries delivered, why it was cut
        or "")."""
        path = "/v1/jobs/" + _seg(job_id) + "/logs"
        delivered = 0
        read: Dict[str, int] = {}
        with self._t.stream("GET", path, query={"follow": "1" if follow else None}) as stream:
            try:
                for line in stream.lines():
                    entry = LogEntry.from_dict(json.loads(line))
                    read[entry.task_id] = read.get(entry.task_id, 0) + 1
                    if read[entry.task_id] <= seen.get(entry.task_id, 0):
                        continue
                    seen[entry.task_id] = seen.get(entry.task_id, 0) + 1
                    delivered += 1
                    yield entry
            except StreamCut as exc:
                return "", delivered, str(exc)
            except ValueError as exc:
                raise Error(errors.INTERNAL, f"a log entry of job {job_id} is not JSON: {exc}") from None
            return stream.trailer(STREAM_END_TRAILER), delivered, ""


class Tasks(_Resource):
    """``/v1/tasks``: what a client may do with one task."""

    def exec(self, task_id: str, command: Sequence[str], *, stdin: bytes = b"") -> ExecResult:
        """Runs ``command`` (a list: program and arguments, no shell) inside
        a running task's sandbox, as the task's user, and returns its
        output and exit code once it ended (docs/exec.md).

        It opens a session (``POST /v1/tasks/{id}/exec``), then attaches
        without a WebSocket: ``stdin`` is sent whole (at most 1 MiB) as the
        attach's body, and the answer's lines are the output frames, the
        exit code last. Interactive sessions (a TTY, stdin as you type)
        need the WebSocket attach: use ``gpulayer job exec -it``.

        Refusals come as :class:`Error`: ``not_found`` for a task that does
        not exist or that the token may not exec into, ``conflict`` for a
        task that is not running (or whose agent did not attach in time).
        """
        if isinstance(command, str) or not command:
            raise ValueError("command must be a non-empty list of strings")
        if not isinstance(stdin, (bytes, bytearray)):
            raise TypeError("stdin must be bytes")
        session = self._json("POST", "/v1/tasks/" + _seg(task_id) + "/exec", {"command": list(command)})
        out: Dict[str, bytearray] = {"stdout": bytearray(), "stderr": bytearray()}
        with self._t.stream("POST", session["attach_path"], bytes(stdin)) as stream:
            for line in stream.lines():
                try:
                    frame = json.loads(line)
                except ValueError:
                    raise Error(errors.INTERNAL, f"an exec frame of task {task_id} is not JSON") from None
                kind = frame.get("type")
                if kind in out:
                    out[kind] += base64.b64decode(frame.get("data", ""))
                elif kind == "exit":
                    return ExecResult(bytes(out["stdout"]), bytes(out["stderr"]), int(frame.get("code", 0)))
                elif kind == "error":
                    raise Error(frame.get("error_code") or errors.INTERNAL, frame.get("message", "exec failed"))
        raise Error(errors.UNAVAILABLE, f"the exec session in task {task_id} ended without an exit code")


class Teams(_Resource):
    """``/v1/teams`` (PROTOCOL.md, "Teams")."""

    def create(
        self,
        name: str,
        *,
        weight: Optional[float] = None,
        quota_gpus: Optional[float] = None,
        borrow_limit_gpus: Optional[float] = None,
        quota_artifact_bytes: Optional[int] = None,
    ) -> Team:
        body = _team_body(name, weight, quota_gpus, borrow_limit_gpus, quota_artifact_bytes)
        return Team.from_dict(self._json("POST", "/v1/teams", body)["team"])

    def list(self) -> List[Team]:
        return [Team.from_dict(t) for t in self._json("GET", "/v1/teams").get("teams", [])]

    def get(self, name: str) -> Team:
        return Team.from_dict(self._json("GET", "/v1/teams/" + _seg(name))["team"])

    def update(
        self,
        name: str,
        *,
        weight: Optional[float] = None,
        quota_gpus: Optional[float] = None,
        borrow_limit_gpus: Optional[float] = None,
        quota_artifact_bytes: Optional[int] = None,
        clear_artifact_quota: bool = False,
    ) -> Team:
        """Changes the fields given; the others stay.
        ``clear_artifact_quota`` lifts the team's artifact byte quota."""
        body = _team_body(None, weight, quota_gpus, borrow_limit_gpus, quota_artifact_bytes)
        if clear_artifact_quota:
            body["clear_artifact_quota"] = True
        return Team.from_dict(self._json("PATCH", "/v1/teams/" + _seg(name), body)["team"])

    def delete(self, name: str) -> None:
        """Deletes a team; one with unfinished jobs answers ``409``."""
        self._t.request("DELETE", "/v1/teams/" + _seg(name))


def _team_body(
    name: Optional[str],
    weight: Optional[float],
    quota: Optional[float],
    borrow: Optional[float],
    artifact_bytes: Optional[int] = None,
) -> Dict[str, Any]:
    body: Dict[str, Any] = Team(
        name=name or "",
        weight=weight,
        quota=None if quota is None and artifact_bytes is None else TeamQuota(quota, artifact_bytes),
        borrow_limit=None if borrow is None else GPUs(borrow),
    ).to_dict()
    if name is None:
        body.pop("name")
    return body


class Tokens(_Resource):
    """``/v1/tokens`` and ``/v1/instance-tokens`` (admin): client, join and
    instance tokens."""

    def create(
        self,
        name: str,
        *,
        kind: str = "client",
        roles: Optional[Sequence[str]] = None,
        team: Optional[str] = None,
        expires_in_seconds: Optional[int] = None,
        max_uses: Optional[int] = None,
        requires_approval: Optional[bool] = None,
        groups: Optional[Sequence[str]] = None,
        labels: Optional[Mapping[str, str]] = None,
    ) -> CreatedToken:
        """Creates a token. The answer's ``token`` is the bearer secret,
        shown only this once."""
        body: Dict[str, Any] = {"kind": kind, "name": name}
        optional: Tuple[Tuple[str, Any], ...] = (
            ("roles", None if roles is None else list(roles)),
            ("team", team),
            ("expires_in_seconds", expires_in_seconds),
            ("max_uses", max_uses),
            ("requires_approval", requires_approval),
            ("groups", None if groups is None else list(groups)),
            ("labels", None if labels is None else dict(labels)),
        )
        body.update((k, v) for k, v in optional if v is not None)
        return CreatedToken.from_dict(self._json("POST", "/v1/tokens", body))

    def create_instance(
        self, instance_id: str, *, name: Optional[str] = None, expires_in_seconds: Optional[int] = None
    ) -> CreatedToken:
        """Creates an instance token (``POST /v1/instance-tokens``): single
        use, bound to one cloud instance, for a registration with
        ``origin: provider``. The answer's ``token`` is shown only this
        once."""
        body: Dict[str, Any] = {"instance_id": instance_id}
        if name is not None:
            body["name"] = name
        if expires_in_seconds is not None:
            body["expires_in_seconds"] = expires_in_seconds
        return CreatedToken.from_dict(self._json("POST", "/v1/instance-tokens", body))

    def list_instance(self) -> List[Token]:
        """The instance tokens (``GET /v1/instance-tokens``)."""
        return [Token.from_dict(t) for t in self._json("GET", "/v1/instance-tokens").get("tokens", [])]

    def list(self) -> List[Token]:
        return [Token.from_dict(t) for t in self._json("GET", "/v1/tokens").get("tokens", [])]

    def get(self, token_id: str) -> Token:
        return Token.from_dict(self._json("GET", "/v1/tokens/" + _seg(token_id))["token"])

    def revoke(self, token_id: str) -> Token:
        return Token.from_dict(self._json("DELETE", "/v1/tokens/" + _seg(token_id))["token"])


class Workers(_Resource):
    """``/v1/workers`` (admin): the fleet."""

    def list(self) -> List[Worker]:
        return [Worker.from_dict(w) for w in self._json("GET", "/v1/workers").get("workers", [])]

    def get(self, worker_id: str) -> Worker:
        return Worker.from_dict(self._json("GET", _worker(worker_id))["worker"])

    def drain(self, worker_id: str, *, deadline_seconds: Optional[int] = None) -> Worker:
        """No new task for the worker; what still runs at the deadline is
        stopped and requeued without using up an attempt."""
        body = {} if deadline_seconds is None else {"deadline_seconds": deadline_seconds}
        return self._action(worker_id, "drain", body)

    def stop(self, worker_id: str) -> Worker:
        """Stops the worker's tasks now (requeued) and then its agent."""
        return self._action(worker_id, "stop", {})

    def resume(self, worker_id: str) -> Worker:
        """Makes a draining or stopping worker ready again."""
        return self._action(worker_id, "resume", {})

    def approve(self, worker_id: str) -> Worker:
        """Lets a pending worker heartbeat and take work."""
        return Worker.from_dict(self._json("POST", _worker(worker_id) + "/approve", {})["worker"])

    def revoke(self, worker_id: str) -> Worker:
        """Revokes the worker's credential; its tasks are requeued."""
        return Worker.from_dict(self._json("POST", _worker(worker_id) + "/revoke", {})["worker"])

    def reissue(self, worker_id: str) -> Reissued:
        """Gives the worker a new credential, shown this once (``token``);
        the previous one is dead at once, and the worker keeps its tasks."""
        return Reissued.from_dict(self._json("POST", _worker(worker_id) + "/reissue", {}))

    def cordon(self, worker_id: str, uuid: str, *, reason: str = "") -> Worker:
        """Gives one GPU of the worker no new task; what runs on it goes on."""
        body = {"reason": reason} if reason else {}
        return self._action(worker_id, "devices/" + _seg(uuid) + "/cordon", body)

    def drain_gpu(self, worker_id: str, uuid: str, *, reason: str = "") -> Worker:
        """Cordons one GPU of the worker and stops the tasks on it: they
        are requeued, elsewhere, without using an attempt."""
        body = {"reason": reason} if reason else {}
        return self._action(worker_id, "devices/" + _seg(uuid) + "/drain", body)

    def set_mig_layout(self, worker_id: str, uuid: str, layout: List[str]) -> Worker:
        """Asks for one GPU's MIG layout (profiles such as ``"3g.40gb"``;
        ``[]`` for the GPU whole): it takes no new task while its agent
        drains and repartitions it; ``Worker.mig_layouts`` says how it
        stands."""
        doc = self._json("PUT", _worker(worker_id) + "/devices/" + _seg(uuid) + "/mig", {"layout": list(layout)}, idempotent=True)
        return Worker.from_dict(doc["worker"])

    def clear_mig_layout(self, worker_id: str, uuid: str) -> Worker:
        """Drops a GPU's MIG layout request: the GPU is taken as it is."""
        doc = self._json("DELETE", _worker(worker_id) + "/devices/" + _seg(uuid) + "/mig", idempotent=True)
        return Worker.from_dict(doc["worker"])

    def uncordon(self, worker_id: str, uuid: str) -> Worker:
        """Offers a cordoned GPU again."""
        return self._action(worker_id, "devices/" + _seg(uuid) + "/uncordon", {})

    def forget(self, worker_id: str) -> Worker:
        """Forgets a revoked, offline or unapproved worker that holds no
        task (the audit log keeps it); answers the record as it was."""
        return Worker.from_dict(self._json("DELETE", _worker(worker_id))["worker"])

    def _action(self, worker_id: str, action: str, body: Dict[str, Any]) -> Worker:
        # Drain, stop, resume, (un)cordon and a GPU's drain set a state:
        # twice is once (a second GPU drain finds nothing left to stop), so
        # they are resent after any failure, as sdk/client does.
        doc = self._json("POST", _worker(worker_id) + "/" + action, body, idempotent=True)
        return Worker.from_dict(doc["worker"])


def _worker(worker_id: str) -> str:
    return "/v1/workers/" + _seg(worker_id)
