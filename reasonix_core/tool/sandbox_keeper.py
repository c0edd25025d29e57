"""The session's kept sandboxes: who holds them, leases them and closes them.

:class:`SandboxKeeper` is what the session builds (``session/build.py``,
:attr:`SessionEnv.kept_sandboxes <reasonix_core.tool.env.SessionEnv.kept_sandboxes>`)
and what the bash tool asks for a sandbox before every foreground command. The
sandboxes themselves, their checks and the protocol with their zygote are in
:mod:`reasonix_core.tool.kept_sandbox`, imported with the first command (a session
that never runs one never loads it). docs/SECURITY.md, "A sandbox kept per session".
"""

from __future__ import annotations

import logging
import threading
import time
from pathlib import Path
from typing import TYPE_CHECKING

import anyio
import anyio.to_thread

if TYPE_CHECKING:
    from reasonix_core.tool.kept_sandbox import KeptLease, KeptSandbox, SandboxSpec, Spawner
    from reasonix_core.tool.sandbox import SandboxPolicy

log = logging.getLogger(__name__)

#: Kept sandboxes per keeper (one per sandbox policy: the session's, a subagent's
#: write claim); the least recently used idle one is closed to make room.
MAX_KEPT = 4


def zygote_source() -> str:
    """The zygote's program text (:mod:`reasonix_core.tool.sandbox_zygote`), read
    when the session starts: a command that rewrites the file later (a Reasonix
    checkout being the workspace) changes nothing for this session."""
    return Path(__file__).with_name("sandbox_zygote.py").read_text(encoding="utf-8")


class SandboxKeeper:
    """The session's kept sandboxes, at most one per sandbox policy
    (:data:`MAX_KEPT` in all). Thread-safe: :meth:`lease` runs in a worker thread,
    :class:`KeptLease` gives the sandbox back from the event loop."""

    def __init__(self, *, limit: int = MAX_KEPT) -> None:
        self.limit = limit
        self._source = zygote_source()
        self._lock = threading.Lock()
        self._kept: list[KeptSandbox] = []
        # Policies whose kept sandbox is being built (outside the lock).
        self._building: list[SandboxPolicy] = []
        # Its thread starts bubblewrap; made with the first kept sandbox.
        self._spawner: Spawner | None = None
        self._closed = False
        # Why kept sandboxes are off for this session (a start failed), or None.
        self.disabled: str | None = None
        # How many kept sandboxes this keeper has built (each rebuild counts).
        self.built = 0

    @property
    def sandboxes(self) -> tuple[KeptSandbox, ...]:
        with self._lock:
            return tuple(self._kept)

    def lease(self, policy: SandboxPolicy) -> KeptLease | None:
        """The kept sandbox for ``policy``, checked against what it would be built
        from now (rebuilt on any difference), reserved for one command; None when
        the command must get a fresh bubblewrap (a write grant, the kept one busy,
        kept sandboxes unavailable). Blocking: call it from a worker thread."""
        from reasonix_core.tool.kept_sandbox import KeptLease, spec_for
        from reasonix_core.tool.shell_sandbox import SandboxUnavailable

        if policy.bash != "enforce" or policy.granted or self._closed or self.disabled:
            return None
        try:
            spec = spec_for(policy)
        except SandboxUnavailable:
            return None
        retired: list[KeptSandbox] = []
        try:
            with self._lock:
                if self._closed or any(p == policy for p in self._building):
                    return None
                kept = next((k for k in self._kept if k.policy == policy), None)
                if kept is not None:
                    if kept.busy:
                        return None
                    if kept.usable(spec):
                        kept.busy = True
                        return KeptLease(self, kept)
                    retired.append(self._drop(kept))
                if len(self._kept) + len(self._building) >= self.limit:
                    idle = [k for k in self._kept if not k.busy]
                    if not idle:
                        return None
                    retired.append(self._drop(min(idle, key=lambda k: k.used)))
                self._building.append(policy)
            # Built outside the lock: the event loop gives sandboxes back under it.
            return self._build(policy, spec)
        finally:
            for old in retired:
                old.reap()

    def _build(self, policy: SandboxPolicy, spec: SandboxSpec) -> KeptLease | None:
        from reasonix_core.tool.kept_sandbox import ChannelBroken, KeptLease, KeptSandbox, Spawner

        if self._spawner is None:
            self._spawner = Spawner()
        kept = None
        try:
            kept = KeptSandbox.start(policy, spec, self._source, self._spawner)
        except (OSError, ChannelBroken, ValueError) as exc:
            self.disabled = str(exc) or type(exc).__name__
            log.warning("kept sandbox unavailable, using a fresh one per command: %s", exc)
        finally:
            with self._lock:
                self._building.remove(policy)
                closed = self._closed
                if kept is not None and not closed:
                    kept.busy = True
                    self._kept.append(kept)
                    self.built += 1
        if kept is None:
            return None
        if closed:  # the session ended while it was being built
            kept.reap()
            return None
        return KeptLease(self, kept)

    def _drop(self, kept: KeptSandbox) -> KeptSandbox:
        """Take ``kept`` out (lock held) and kill it; the caller reaps it."""
        self._kept.remove(kept)
        kept.kill()
        return kept

    def give_back(self, kept: KeptSandbox, *, retire: bool) -> KeptSandbox | None:
        """A command is done with ``kept``. Returns it when it is retired now (killed;
        the caller reaps it off the event loop)."""
        with self._lock:
            kept.busy = False
            kept.used = time.monotonic()
            if kept not in self._kept:
                kept.release_channel()  # the keeper closed meanwhile and reaped it
                return None
            if retire or kept.dead:
                return self._drop(kept)
            return None

    def close(self) -> None:
        """Kill every kept sandbox, wait for each, stop the spawning thread.
        Idempotent; blocking (the session calls :meth:`aclose`)."""
        with self._lock:
            self._closed = True
            kept, self._kept = self._kept, []
            for each in kept:
                each.kill()
        for each in kept:
            each.reap()
        if self._spawner is not None:
            self._spawner.stop()

    async def aclose(self) -> None:
        with anyio.CancelScope(shield=True):
            await anyio.to_thread.run_sync(self.close)
