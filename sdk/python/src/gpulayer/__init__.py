"""GpuLayer's Python SDK: submit and follow GPU jobs on a GpuLayer cluster.

Everything a caller needs is here::

    import gpulayer

    gl = gpulayer.Client.from_env()          # GPULAYER_ADDR, GPULAYER_TOKEN
    job = gl.jobs.submit(gpulayer.JobSpec.command(["python", "train.py"], gpus=1))
    for entry in gl.jobs.logs(job.id, follow=True):
        print(entry.data, end="")
    job = gl.jobs.wait(job.id)

Every failure raises :class:`gpulayer.Error`, which carries the contract's
``code``. See docs/python.md in the repository.
"""

from ._version import GO_VERSION, __version__
from .client import Client, Jobs, Tasks, Teams, Tokens, Workers
from .errors import Error
from .models import (
    Artifact,
    Attempt,
    Checkpoint,
    CreatedToken,
    Dependency,
    Device,
    EventAttempt,
    ExecResult,
    GPUs,
    Job,
    JobEvent,
    JobEvents,
    JobPage,
    JobSpec,
    LogEntry,
    MIGLayout,
    Preemptor,
    Queue,
    QueueTask,
    QueueTeam,
    Reissued,
    Resources,
    Target,
    Task,
    Team,
    TeamQuota,
    TeamUsage,
    Token,
    Usage,
    UsageRow,
    Worker,
)

__all__ = [
    "GO_VERSION",
    "__version__",
    "Client",
    "Jobs",
    "Tasks",
    "Teams",
    "Tokens",
    "Workers",
    "Error",
    "Artifact",
    "Attempt",
    "Checkpoint",
    "CreatedToken",
    "Dependency",
    "Device",
    "EventAttempt",
    "ExecResult",
    "GPUs",
    "Job",
    "JobEvent",
    "JobEvents",
    "JobPage",
    "JobSpec",
    "LogEntry",
    "MIGLayout",
    "Preemptor",
    "Queue",
    "QueueTask",
    "QueueTeam",
    "Reissued",
    "Resources",
    "Target",
    "Task",
    "Team",
    "TeamQuota",
    "TeamUsage",
    "Token",
    "Usage",
    "UsageRow",
    "Worker",
]
