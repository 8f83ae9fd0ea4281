"""The one exception type of the SDK.

Every failure a call can meet is raised as :class:`Error`. A refusal by a
coordinator carries the contract's ``code`` (``not_found``,
``invalid_argument``, ...), the HTTP status and the server's message and
request id. Two codes are the SDK's own, for failures no coordinator
answered: :data:`UNAVAILABLE` (no coordinator could serve the call within
the retry budget), :data:`OUTCOME_UNKNOWN` (a write that is not safe to
resend reached a coordinator, but its answer was lost), :data:`TIMEOUT`
(``jobs.wait`` ran out of time) and :data:`UNSUPPORTED` (an answer this
version cannot speak). Their ``status`` is ``None``.

An error never holds the bearer token: the transport removes it from any
text before it builds one, and neither ``str`` nor ``repr`` shows more
than the fields below.
"""

from __future__ import annotations

from typing import Optional

# The contract's codes (PROTOCOL.md, "Errors").
PROTOCOL_MISMATCH = "protocol_mismatch"
INVALID_ARGUMENT = "invalid_argument"
RESERVED_IDENTIFIER = "reserved_identifier"
UNAUTHENTICATED = "unauthenticated"
FORBIDDEN = "forbidden"
NOT_FOUND = "not_found"
CONFLICT = "conflict"
BODY_TOO_LARGE = "body_too_large"
RATE_LIMITED = "rate_limited"
NOT_LEADER = "not_leader"
NO_LEADER = "no_leader"
INTERNAL = "internal"

# The SDK's own codes: nothing a coordinator says.
UNAVAILABLE = "unavailable"
"""No coordinator could serve the call before the retry budget ran out."""
OUTCOME_UNKNOWN = "outcome_unknown"
"""A write that is not safe to resend may or may not have been applied."""
TIMEOUT = "timeout"
"""A wait ran out of time (the job goes on)."""
UNSUPPORTED = "unsupported"
"""The coordinator answered with something this SDK version cannot speak."""


class Error(Exception):
    """A failed call: a coordinator's refusal, or no usable answer at all.

    Attributes:
        code: the contract's error code, or one of the SDK's own
            (:data:`UNAVAILABLE`, :data:`OUTCOME_UNKNOWN`, :data:`TIMEOUT`,
            :data:`UNSUPPORTED`).
        status: the HTTP status of the answer; ``None`` when no
            coordinator answered.
        message: human text, the coordinator's where it sent one.
        request_id: the coordinator's request id, to quote when reporting
            a problem; empty when there was no answer.
        leader: with ``not_leader``, the leader's address.
        retry_after: the ``Retry-After`` seconds of the answer, if any.
        outcome_unknown: true when the write may have been applied all the
            same (a coordinator said so, or its answer was lost).
    """

    code: str
    status: Optional[int]
    message: str
    request_id: str
    leader: str
    retry_after: Optional[int]
    outcome_unknown: bool

    def __init__(
        self,
        code: str,
        message: str,
        *,
        status: Optional[int] = None,
        request_id: str = "",
        leader: str = "",
        retry_after: Optional[int] = None,
        outcome_unknown: bool = False,
    ) -> None:
        super().__init__(code, message)
        self.code = code
        self.status = status
        self.message = message
        self.request_id = request_id
        self.leader = leader
        self.retry_after = retry_after
        self.outcome_unknown = outcome_unknown or code == OUTCOME_UNKNOWN

    @property
    def retryable(self) -> bool:
        """Whether no coordinator refused the call as such: it may succeed
        if sent again later (for a write, only if it is safe to repeat)."""
        return self.code in (UNAVAILABLE, OUTCOME_UNKNOWN, NO_LEADER, NOT_LEADER, RATE_LIMITED)

    def __str__(self) -> str:
        where = f"HTTP {self.status} " if self.status is not None else ""
        rid = f" (request {self.request_id})" if self.request_id else ""
        return f"{where}{self.code}: {self.message}{rid}"

    def __repr__(self) -> str:
        return (
            f"Error(code={self.code!r}, status={self.status!r}, "
            f"message={self.message!r}, request_id={self.request_id!r})"
        )

    def __reduce__(self):  # type: ignore[no-untyped-def]
        # Pickling (multiprocessing, Airflow and Prefect results) keeps
        # every field; the default would call __init__ with args only.
        return (
            _rebuild,
            (
                self.code,
                self.message,
                self.status,
                self.request_id,
                self.leader,
                self.retry_after,
                self.outcome_unknown,
            ),
        )


def _rebuild(
    code: str,
    message: str,
    status: Optional[int],
    request_id: str,
    leader: str,
    retry_after: Optional[int],
    outcome_unknown: bool,
) -> Error:
    return Error(
        code,
        message,
        status=status,
        request_id=request_id,
        leader=leader,
        retry_after=retry_after,
        outcome_unknown=outcome_unknown,
    )
