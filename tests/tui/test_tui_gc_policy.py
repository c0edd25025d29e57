"""The idle garbage-collection policy: full passes only at idle or quiet moments."""

from __future__ import annotations

import gc

import pytest

from reasonix_tui import gc_policy
from reasonix_tui.gc_policy import BUSY_PASSES, IDLE_SECONDS, QUIET_SECONDS, IdleCollector


class FakeGc:
    def __init__(self, monkeypatch: pytest.MonkeyPatch) -> None:
        self.passes = 0
        self.collected = 0
        monkeypatch.setattr(gc, "get_count", lambda: (0, 0, self.passes))
        monkeypatch.setattr(gc, "collect", self._collect)

    def _collect(self, *args: object) -> int:
        self.collected += 1
        self.passes = 0
        return 0


def make(monkeypatch: pytest.MonkeyPatch) -> tuple[IdleCollector, FakeGc, list[float]]:
    now = [100.0]
    return IdleCollector(clock=lambda: now[0]), FakeGc(monkeypatch), now


def test_idle_app_collects_once_after_idle_seconds(monkeypatch) -> None:
    collector, fake, now = make(monkeypatch)
    fake.passes = 3
    now[0] += IDLE_SECONDS - 0.1
    assert not collector.maybe_collect(busy=False)
    now[0] += 0.2
    assert collector.maybe_collect(busy=False)
    assert fake.collected == 1
    now[0] += 10
    assert not collector.maybe_collect(busy=False)  # nothing happened since
    fake.passes = 1
    collector.touch()  # a key press
    now[0] += 1
    assert not collector.maybe_collect(busy=False)


def test_busy_turn_collects_only_when_quiet_and_garbage_piled_up(monkeypatch) -> None:
    collector, fake, now = make(monkeypatch)
    fake.passes = BUSY_PASSES
    now[0] += QUIET_SECONDS / 2
    assert not collector.maybe_collect(busy=True)  # the stream is still flowing
    now[0] += QUIET_SECONDS
    fake.passes = BUSY_PASSES - 1
    assert not collector.maybe_collect(busy=True)  # quiet, but little to collect
    fake.passes = BUSY_PASSES
    assert collector.maybe_collect(busy=True)
    assert fake.collected == 1


def test_install_is_not_done_by_the_app_under_test(make_app) -> None:
    # Tests never freeze objects: only run_app installs the policy.
    app, _ = make_app()
    assert not gc_policy.installed()
    assert app.idle_gc is None
