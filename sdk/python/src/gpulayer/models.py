"""The records the coordinator answers, and the job spec a caller sends.

Each record is a dataclass whose fields carry the wire names of
PROTOCOL.md and ``docs/protocol.md``; ``from_dict`` builds one from a
decoded answer. Fields a newer coordinator sends that this version does
not know are kept in ``extra``, so nothing is lost and nothing breaks.
Timestamps stay the contract's RFC 3339 strings.
"""

from __future__ import annotations

import dataclasses
import functools
from dataclasses import dataclass, field
from typing import (
    Any,
    Dict,
    List,
    Mapping,
    Optional,
    Sequence,
    Tuple,
    Type,
    TypeVar,
    Union,
    get_args,
    get_origin,
    get_type_hints,
)

T = TypeVar("T", bound="Record")

# Job and task states (a job's is derived from its tasks).
PENDING = "pending"
ASSIGNED = "assigned"
RUNNING = "running"
SUCCEEDED = "succeeded"
FAILED = "failed"
CANCELLED = "cancelled"
TERMINAL_STATES = frozenset({SUCCEEDED, FAILED, CANCELLED})


class Record:
    """Decoding and encoding shared by every record."""

    @classmethod
    def from_dict(cls: Type[T], data: Mapping[str, Any]) -> T:
        return _decode(cls, data)

    def to_dict(self) -> Dict[str, Any]:
        """The record as JSON values, fields that are ``None`` left out
        (``extra`` merged back in)."""
        out: Dict[str, Any] = _encode(self)
        return out


@dataclass
class Resources(Record):
    """What each task of a job needs from the worker that runs it."""

    gpus: Optional[int] = None
    gpu_memory_mib: Optional[int] = None
    gpu_model: Optional[str] = None
    compute_capability: Optional[str] = None
    mig_profile: Optional[str] = None
    gpu_sharing: Optional[str] = None
    memory_mib: Optional[int] = None
    cpus: Optional[float] = None
    extra: Dict[str, Any] = field(default_factory=dict, repr=False)


@dataclass
class Target(Record):
    """Restricts a job to one worker (``kind="worker"``) or a group."""

    kind: str = ""
    id: str = ""
    extra: Dict[str, Any] = field(default_factory=dict, repr=False)


@dataclass
class Dependency(Record):
    """``depends_on`` entry: wait for ``job`` to end as ``condition``
    (``succeeded``, ``failed`` or ``finished``)."""

    job: str = ""
    condition: str = SUCCEEDED
    extra: Dict[str, Any] = field(default_factory=dict, repr=False)


@dataclass
class Artifact(Record):
    """An input to stage, or an output a task's finish listed."""

    sha256: str = ""
    path: Optional[str] = None
    size: Optional[int] = None
    extra: Dict[str, Any] = field(default_factory=dict, repr=False)


@dataclass
class Attempt(Record):
    """One assignment of a task to a worker."""

    attempt_id: str = ""
    number: int = 0
    worker_id: str = ""
    state: str = ""
    devices: List[str] = field(default_factory=list)
    assigned_at: str = ""
    started_at: Optional[str] = None
    ended_at: Optional[str] = None
    exit_code: Optional[int] = None
    reason: Optional[str] = None
    extra: Dict[str, Any] = field(default_factory=dict, repr=False)


@dataclass
class Task(Record):
    """One unit of a job."""

    id: str = ""
    job_id: str = ""
    index: int = 0
    state: str = ""
    attempt: int = 0
    attempt_id: Optional[str] = None
    worker_id: Optional[str] = None
    exit_code: Optional[int] = None
    output: Any = None
    artifacts: List[Artifact] = field(default_factory=list)
    reason: Optional[str] = None
    pending_reason: Optional[str] = None
    submitted_by: Optional[str] = None
    executed_by: Optional[str] = None
    devices: List[str] = field(default_factory=list)
    cancel_requested: bool = False
    attempts: List[Attempt] = field(default_factory=list)
    created_at: str = ""
    updated_at: str = ""
    extra: Dict[str, Any] = field(default_factory=dict, repr=False)

    @property
    def done(self) -> bool:
        return self.state in TERMINAL_STATES


@dataclass
class JobSpec(Record):
    """The body of a submit. ``executor`` and its ``config`` are required;
    everything left ``None`` takes the coordinator's default.

    :meth:`command` builds the spec of the built-in ``exec`` executor.
    Fields this SDK does not know yet go in ``extra``.
    """

    executor: str = "exec"
    config: Any = None
    name: Optional[str] = None
    count: Optional[int] = None
    resources: Optional[Resources] = None
    capability: Optional[str] = None
    target: Optional[Target] = None
    affinity: Optional[List[Dict[str, Any]]] = None
    spread: Optional[bool] = None
    gang: Optional[bool] = None
    exclusive_worker: Optional[bool] = None
    max_per_worker: Optional[int] = None
    priority: Optional[int] = None
    max_attempts: Optional[int] = None
    lease_seconds: Optional[int] = None
    timeout_seconds: Optional[int] = None
    inputs: Optional[List[Artifact]] = None
    outputs: Optional[List[str]] = None
    idempotency_key: Optional[str] = None
    # Third-wave job fields (PROTOCOL.md, "Queueing"); sent only when set.
    preemptible: Optional[bool] = None
    preemption_grace_seconds: Optional[int] = None
    checkpoint: Optional[Dict[str, Any]] = None
    depends_on: Optional[List[Dependency]] = None
    parallelism: Optional[int] = None
    extra: Dict[str, Any] = field(default_factory=dict, repr=False)

    @classmethod
    def command(
        cls,
        argv: Sequence[str],
        *,
        env: Optional[Mapping[str, str]] = None,
        dir: Optional[str] = None,
        gpus: Optional[int] = None,
        **fields: Any,
    ) -> "JobSpec":
        """A job of the ``exec`` executor running ``argv`` (no shell), with
        ``gpus`` GPUs per task; other keywords are :class:`JobSpec` fields.
        """
        if isinstance(argv, str) or not argv:
            raise ValueError("argv must be a non-empty list of strings, the command first")
        config: Dict[str, Any] = {"command": argv[0]}
        if len(argv) > 1:
            config["args"] = list(argv[1:])
        if env:
            config["env"] = dict(env)
        if dir:
            config["dir"] = dir
        if gpus is not None:
            res = fields.pop("resources", None) or Resources()
            res.gpus = gpus
            fields["resources"] = res
        return cls(executor="exec", config=config, **fields)


@dataclass
class Job(Record):
    """A submitted job: the spec it was submitted with plus server fields."""

    id: str = ""
    state: str = ""
    name: Optional[str] = None
    executor: str = ""
    config: Any = None
    count: Optional[int] = None
    resources: Optional[Resources] = None
    capability: Optional[str] = None
    target: Optional[Target] = None
    priority: Optional[int] = None
    max_attempts: Optional[int] = None
    lease_seconds: Optional[int] = None
    timeout_seconds: Optional[int] = None
    idempotency_key: Optional[str] = None
    parallelism: Optional[int] = None
    depends_on: Optional[List[Dependency]] = None
    team: Optional[str] = None
    created_by: str = ""
    created_at: str = ""
    updated_at: str = ""
    reason: Optional[str] = None
    tasks: List[Task] = field(default_factory=list)
    extra: Dict[str, Any] = field(default_factory=dict, repr=False)

    @property
    def done(self) -> bool:
        """Whether the job has ended (succeeded, failed or cancelled)."""
        return self.state in TERMINAL_STATES

    @property
    def succeeded(self) -> bool:
        return self.state == SUCCEEDED

    @property
    def exit_codes(self) -> List[Optional[int]]:
        """Each task's exit code, in task order (``None`` where it has
        none: not ended, or ended without running)."""
        return [t.exit_code for t in sorted(self.tasks, key=lambda t: t.index)]


@dataclass
class JobPage(Record):
    """One page of ``GET /v1/jobs``; ``next`` is the cursor of the
    following page, empty on the last one."""

    jobs: List[Job] = field(default_factory=list)
    next: str = ""
    extra: Dict[str, Any] = field(default_factory=dict, repr=False)


@dataclass
class Preemptor(Record):
    """The job, team and task a preemption was made for."""

    job_id: str = ""
    team: str = ""
    task_id: str = ""
    extra: Dict[str, Any] = field(default_factory=dict, repr=False)


@dataclass
class EventAttempt(Record):
    """The attempt an attempt event is about; ``outcome``, ``exit_code``
    and ``reason`` are set on ``attempt.ended``."""

    attempt_id: str = ""
    number: int = 0
    worker_id: str = ""
    devices: List[str] = field(default_factory=list)
    outcome: Optional[str] = None
    exit_code: Optional[int] = None
    reason: Optional[str] = None
    extra: Dict[str, Any] = field(default_factory=dict, repr=False)


@dataclass
class Checkpoint(Record):
    """A task's latest checkpoint: the artifact one of its attempts saved."""

    sha256: str = ""
    size: int = 0
    attempt_id: str = ""
    format: str = ""
    extra: Dict[str, Any] = field(default_factory=dict, repr=False)


@dataclass
class JobEvent(Record):
    """One fact of a job's history (``kind``: ``job.submitted``,
    ``job.waiting``, ``attempt.assigned``, ``attempt.started``,
    ``attempt.preempted``, ``attempt.ended``, ``checkpoint.saved``,
    ``task.cancelled``, ``attempt.preflight`` (its ``preflight`` is in
    ``extra``); kinds may be added). The fields its kind has are
    set."""

    time: str = ""
    kind: str = ""
    by: Optional[str] = None
    team: Optional[str] = None
    task_id: Optional[str] = None
    task_index: Optional[int] = None
    attempt: Optional[EventAttempt] = None
    preempted_by: Optional[Preemptor] = None
    checkpoint: Optional[Checkpoint] = None
    depends_on: List[Dependency] = field(default_factory=list)
    reason: Optional[str] = None
    extra: Dict[str, Any] = field(default_factory=dict, repr=False)


@dataclass
class JobEvents(Record):
    """``GET /v1/jobs/{id}/events``: the job's events, oldest first; the
    latest 10,000 at most, ``truncated`` when older ones were left out."""

    job_id: str = ""
    events: List[JobEvent] = field(default_factory=list)
    truncated: bool = False
    extra: Dict[str, Any] = field(default_factory=dict, repr=False)


@dataclass
class LogEntry(Record):
    """One chunk of a task's output."""

    task_id: str = ""
    index: int = 0
    attempt: int = 0
    stream: str = ""
    seq: int = 0
    data: str = ""
    time: Optional[str] = None
    extra: Dict[str, Any] = field(default_factory=dict, repr=False)


@dataclass
class Device(Record):
    """A GPU (or MIG device) a worker advertises."""

    index: int = 0
    uuid: str = ""
    name: str = ""
    memory_mib: int = 0
    compute_capability: Optional[str] = None
    healthy: bool = False
    health: Optional[str] = None
    health_reason: Optional[str] = None
    cordoned: Optional[bool] = None
    cordon_reason: Optional[str] = None
    mig_profile: Optional[str] = None
    parent_uuid: Optional[str] = None
    extra: Dict[str, Any] = field(default_factory=dict, repr=False)


@dataclass
class MIGLayout(Record):
    """The MIG layout asked of one of a worker's GPUs, and how it stands:
    ``pending`` (the agent drains and repartitions it), ``applied``, or
    ``failed`` with the agent's reason."""

    uuid: str = ""
    layout: List[str] = field(default_factory=list)
    state: str = ""
    reason: Optional[str] = None
    requested_by: str = ""
    requested_at: str = ""
    settled_at: Optional[str] = None
    auto: Optional[bool] = None
    extra: Dict[str, Any] = field(default_factory=dict, repr=False)


@dataclass
class Worker(Record):
    """A registered worker as the registry shows it."""

    worker_id: str = ""
    status: str = ""
    labels: Dict[str, str] = field(default_factory=dict)
    capabilities: List[str] = field(default_factory=list)
    executors: List[str] = field(default_factory=list)
    devices: List[Device] = field(default_factory=list)
    running_tasks: List[str] = field(default_factory=list)
    registered_at: str = ""
    registered_by: Optional[str] = None
    last_heartbeat: Optional[str] = None
    groups: List[str] = field(default_factory=list)
    origin: Optional[str] = None
    mig_layouts: List[MIGLayout] = field(default_factory=list)
    extra: Dict[str, Any] = field(default_factory=dict, repr=False)


@dataclass
class Token(Record):
    """A client, join or instance token's record: never its secret."""

    id: str = ""
    kind: str = ""
    name: str = ""
    roles: List[str] = field(default_factory=list)
    team: Optional[str] = None
    created_at: str = ""
    created_by: Optional[str] = None
    expires_at: Optional[str] = None
    max_uses: Optional[int] = None
    uses: int = 0
    last_used_at: Optional[str] = None
    revoked: bool = False
    revoked_at: Optional[str] = None
    extra: Dict[str, Any] = field(default_factory=dict, repr=False)


@dataclass
class CreatedToken(Token):
    """The answer to creating a token: the record plus the bearer token,
    shown only this once. ``repr`` leaves the secret out."""

    token: str = field(default="", repr=False)


@dataclass
class Reissued(Record):
    """The answer to reissuing a worker's credential: the new one, shown
    only this once. ``repr`` leaves the secret out."""

    worker_id: str = ""
    worker_token: str = field(default="", repr=False)
    status: str = ""
    worker: Optional[Worker] = None
    extra: Dict[str, Any] = field(default_factory=dict, repr=False)


@dataclass
class GPUs(Record):
    """A number of GPU units (a MIG instance or a share counts its
    fraction of the parent GPU)."""

    gpus: Optional[float] = None
    extra: Dict[str, Any] = field(default_factory=dict, repr=False)


@dataclass
class TeamQuota(Record):
    """A team's quota: GPUs guaranteed, and the bytes of artifacts its
    tokens and its jobs' tasks may keep (``None``: no team bound)."""

    gpus: Optional[float] = None
    artifact_bytes: Optional[int] = None
    extra: Dict[str, Any] = field(default_factory=dict, repr=False)


@dataclass
class TeamUsage(Record):
    """A team's live figures, and the bytes of artifacts its quota counts."""

    gpus_in_use: float = 0
    running_tasks: int = 0
    pending_tasks: int = 0
    artifact_bytes: int = 0
    extra: Dict[str, Any] = field(default_factory=dict, repr=False)


@dataclass
class Team(Record):
    """The unit that owns jobs, quota and usage."""

    name: str = ""
    weight: Optional[float] = None
    quota: Optional[TeamQuota] = None
    borrow_limit: Optional[GPUs] = None
    usage: Optional[TeamUsage] = None
    extra: Dict[str, Any] = field(default_factory=dict, repr=False)


@dataclass
class UsageRow(Record):
    """GPU-seconds of one group of the usage report."""

    team: str = ""
    gpu_model: Optional[str] = None
    user: Optional[str] = None
    job_id: Optional[str] = None
    gpu_seconds: float = 0
    preempted_gpu_seconds: float = 0
    tasks: int = 0
    extra: Dict[str, Any] = field(default_factory=dict, repr=False)


@dataclass
class Usage(Record):
    """The answer of ``GET /v1/usage``: rows over ``[start, end)``."""

    start: str = field(default="", metadata={"json": "from"})
    end: str = field(default="", metadata={"json": "to"})
    rows: List[UsageRow] = field(default_factory=list)
    extra: Dict[str, Any] = field(default_factory=dict, repr=False)


@dataclass
class QueueTask(Record):
    """A queued task: its place in its team's order (from 1), what it asks
    for in whole GPUs, and why it waits (empty: only for a GPU)."""

    position: int = 0
    task_id: str = ""
    job_id: str = ""
    priority: int = 0
    gpus: float = 0
    gang: bool = False
    reason: str = ""
    extra: Dict[str, Any] = field(default_factory=dict, repr=False)


@dataclass
class QueueTeam(Record):
    """A team's place in the scheduler's order (``share`` = in use / weight,
    lowest first) and its first queued tasks."""

    team: str = ""
    gpus_in_use: float = 0
    weight: float = 0
    share: float = 0
    quota: Optional[GPUs] = None
    borrow_limit: Optional[GPUs] = None
    queued: int = 0
    tasks: List[QueueTask] = field(default_factory=list)
    extra: Dict[str, Any] = field(default_factory=dict, repr=False)


@dataclass
class Queue(Record):
    """The answer of ``GET /v1/queue``: the teams in the order served."""

    teams: List[QueueTeam] = field(default_factory=list)
    extra: Dict[str, Any] = field(default_factory=dict, repr=False)


# -- decoding and encoding ----------------------------------------------------


@functools.lru_cache(maxsize=None)
def _layout(cls: type) -> Tuple[Dict[str, str], Dict[str, Any]]:
    """The (wire name -> field name, field name -> type) of a record."""
    hints = get_type_hints(cls)
    names: Dict[str, str] = {}
    for f in dataclasses.fields(cls):
        if f.name != "extra":
            names[f.metadata.get("json", f.name)] = f.name
    return names, hints


_NONE = type(None)


def _decode(cls: Type[T], data: Mapping[str, Any]) -> T:
    if not isinstance(data, Mapping):
        raise TypeError(f"{cls.__name__}: expected a JSON object, got {type(data).__name__}")
    names, hints = _layout(cls)  # type: ignore[arg-type]  # a class is hashable
    kwargs: Dict[str, Any] = {}
    extra: Dict[str, Any] = {}
    for key, value in data.items():
        name = names.get(key)
        if name is None:
            extra[key] = value
        else:
            kwargs[name] = _convert(hints[name], value)
    if "extra" in hints:
        kwargs["extra"] = extra
    return cls(**kwargs)


def _convert(tp: Any, value: Any) -> Any:
    if value is None:
        return None
    origin = get_origin(tp)
    if origin is Union:
        inner = [a for a in get_args(tp) if a is not _NONE]
        return _convert(inner[0], value) if len(inner) == 1 else value
    if origin in (list, List) and isinstance(value, list):
        (item,) = get_args(tp)
        return [_convert(item, v) for v in value]
    if origin in (dict, Dict) and isinstance(value, dict):
        _, item = get_args(tp)
        return {k: _convert(item, v) for k, v in value.items()}
    if isinstance(tp, type) and issubclass(tp, Record) and isinstance(value, Mapping):
        return _decode(tp, value)
    return value


def _encode(value: Any) -> Any:
    if isinstance(value, Record):
        out: Dict[str, Any] = {}
        for f in dataclasses.fields(value):
            v = getattr(value, f.name)
            if f.name == "extra":
                out.update(v)
            elif v is not None:
                out[f.metadata.get("json", f.name)] = _encode(v)
        return out
    if isinstance(value, (list, tuple)):
        return [_encode(v) for v in value]
    if isinstance(value, dict):
        return {k: _encode(v) for k, v in value.items()}
    return value


@dataclass
class ExecResult:
    """What a non-interactive :meth:`Tasks.exec` returns: the command's
    output, each stream whole, and its exit code."""

    stdout: bytes = b""
    stderr: bytes = b""
    exit_code: int = 0
