"""Typed exceptions raised by library code. Only the CLI turns them into exit codes."""

from __future__ import annotations

import errno
import os


class ReasonixError(Exception):
    """Base class for every error Reasonix raises on purpose."""


class ConfigError(ReasonixError):
    """Configuration is malformed, incomplete or names something unknown (exit 2)."""


class UsageError(ReasonixError):
    """The command line asked for something impossible (exit 2)."""


class CommandError(UsageError):
    """A slash command in the prompt is unknown or could not be expanded (exit 2)."""


class SessionError(ReasonixError):
    """A session could not be found, read or written."""


class SessionBusy(SessionError):
    """The session is open in another Reasonix process (``pid``, when known): a
    run that failed, not a usage error (exit 1; agent/session_lock.py)."""

    def __init__(self, session_id: str, pid: int | None) -> None:
        who = f"pid {pid}" if pid else "pid unknown"
        super().__init__(
            f"session {session_id} is in use by another Reasonix process ({who}); "
            "wait for it to finish, or start a new session"
        )
        self.session_id = session_id
        self.pid = pid


#: TurnFailed.kind of a run the full disk stopped (``error_disk_full`` in its result).
DISK_FULL_KIND = "disk_full"

#: A write that failed for want of space: the file system is full, or the user's quota is.
DISK_FULL_ERRNOS = frozenset({errno.ENOSPC, getattr(errno, "EDQUOT", errno.ENOSPC)})


class DiskFull(ReasonixError):
    """A file Reasonix keeps (a session, its lock or sidecars, a metrics file)
    could not be written because its disk is full: a run that failed, not a usage
    error (exit 1). ``path`` is the file that could not be written."""

    def __init__(self, path: str | os.PathLike[str], reason: str | None = None) -> None:
        self.path = os.fspath(path)
        self.reason = reason or os.strerror(errno.ENOSPC)
        super().__init__(f"the disk is full: cannot write {self.path}: {self.reason}")

    @staticmethod
    def caused(exc: BaseException) -> bool:
        """Whether ``exc`` is a write refused for want of space."""
        return isinstance(exc, OSError) and exc.errno in DISK_FULL_ERRNOS

    @classmethod
    def find(cls, exc: BaseException) -> DiskFull | None:
        """The disk-full failure behind ``exc``, if any: ``exc`` itself, one of an
        exception group's members, or what it was raised from or while handling
        (a bare ENOSPC becomes a :class:`DiskFull` naming its file when it knows
        it). None when the disk was not the cause."""
        seen: set[int] = set()
        bare: OSError | None = None
        stack = [exc]
        while stack:
            current = stack.pop()
            if id(current) in seen:
                continue
            seen.add(id(current))
            if isinstance(current, DiskFull):
                return current  # it names its file: better than a bare ENOSPC
            if bare is None and cls.caused(current):
                assert isinstance(current, OSError)
                bare = current
            if isinstance(current, BaseExceptionGroup):
                stack.extend(current.exceptions)
            stack.extend(e for e in (current.__cause__, current.__context__) if e is not None)
        if bare is None:
            return None
        return cls(bare.filename or "a file", bare.strerror)


class ProviderError(ReasonixError):
    """A model request failed.

    ``retryable`` says whether the unified retry path may replay the frozen
    request; ``retry_after`` is the server's requested delay in seconds, if any.
    """

    def __init__(
        self,
        message: str,
        *,
        status: int | None = None,
        retryable: bool = False,
        retry_after: float | None = None,
        kind: str = "http",
    ) -> None:
        super().__init__(message)
        self.message = message
        self.status = status
        self.retryable = retryable
        self.retry_after = retry_after
        self.kind = kind

    def __str__(self) -> str:
        if self.status is not None:
            return f"HTTP {self.status}: {self.message}"
        return self.message


class ReasoningReplayRequired(ProviderError):
    """DeepSeek's 400 for a request whose earlier assistant turns lack
    ``reasoning_content``, from a host not known to speak DeepSeek's protocol. The
    provider now replays it for that model; the caller may rebuild the request and
    send it once more."""

    def __init__(self, message: str, *, status: int | None = 400) -> None:
        super().__init__(message, status=status, kind="reasoning_replay")


class StreamInterrupted(ProviderError):
    """The stream ended before ``finish_reason`` / ``[DONE]`` (retryable)."""

    def __init__(self, message: str = "stream ended before the response finished") -> None:
        super().__init__(message, retryable=True, kind="stream_interrupted")


#: ``ProviderError.kind`` of an empty answer (its retries are ``empty_final_retries``).
EMPTY_RESPONSE_KIND = "empty_response"


class EmptyResponse(ProviderError):
    """The model produced no content, no reasoning and no tool calls (retryable)."""

    def __init__(self) -> None:
        super().__init__(
            "the model returned an empty response (no content, reasoning or tool calls)",
            retryable=True,
            kind=EMPTY_RESPONSE_KIND,
        )


#: ``ProviderError.kind`` of tool calls that came without the reasoning the protocol
#: replays with them (their retries are ``missing_reasoning_retries``).
MISSING_REASONING_KIND = "missing_reasoning"


class MissingToolCallReasoning(ProviderError):
    """Under DeepSeek's protocol with thinking on, an answer's tool calls came without
    their reasoning, again after the one retry of the frozen request. Replaying ``""``
    in its place would hide a provider fault, so the turn fails instead."""

    def __init__(self, model: str) -> None:
        super().__init__(
            f"{model} answered with tool calls but no reasoning, twice for the same "
            "request (DeepSeek's protocol with thinking on sends it back with the "
            "calls); neither answer was kept",
            kind=MISSING_REASONING_KIND,
        )


class ToolArgumentError(ReasonixError):
    """Tool arguments failed to parse or validate; becomes a result for the model."""


class CheckpointError(ReasonixError):
    """The checkpoint store could not snapshot, read or restore the workspace."""


class RewindConflict(ReasonixError):
    """A rewind would overwrite files changed outside Reasonix since the checkpoint."""

    def __init__(self, paths: list[str]) -> None:
        shown = ", ".join(paths[:5]) + (f" and {len(paths) - 5} more" if len(paths) > 5 else "")
        super().__init__(
            f"changed outside Reasonix since the last checkpoint: {shown}; "
            "nothing was rewound (pass --force to overwrite them)"
        )
        self.paths = paths


class FleetPlanError(ToolArgumentError):
    """A fleet's plan cannot run (duplicate or unknown ids, a cycle, overlapping
    claims of items that may run together); found before any item starts."""


class SkillError(ReasonixError):
    """A skill named by the user or the model is unknown or its file cannot be used."""


class BenchError(ReasonixError):
    """An e2ebench task, cassette or run directory is malformed or missing (exit 2)."""
