"""The runner takes a scheduling slot for every child (docs/SUBAGENTS.md#scheduling):
real children against the loopback fixture, the session's slots held by a
stand-in writer (a fleet item, another task)."""

from __future__ import annotations

import anyio
import pytest

from reasonix_core.subagent.runner import SubagentResult, SubagentRunner
from reasonix_core.subagent.slots import WriteClaim
from reasonix_core.subagent.spec import SubagentSpec
from reasonix_testkit import Reply
from tests.core.agent_helpers import runtime
from tests.core.mcp_helpers import wait_until
from tests.core.subagent_helpers import install, requests_of

pytestmark = pytest.mark.usefixtures("configured")


async def test_a_writer_child_waits_for_an_overlapping_claim_and_a_reader_does_not(
    workspace, server
):
    (workspace / "src").mkdir()
    script = install(server)
    script.when("CHILD-W", Reply(content="edited"))
    script.when("CHILD-R", Reply(content="looked"))
    async with runtime(workspace, permission_mode="auto") as rt:
        runner = rt.agent.tool_context.subagents.runner()
        assert isinstance(runner, SubagentRunner)
        slots = runner.slots
        assert slots is not None
        # The session's limits come from [agent].
        assert (slots.max_concurrency, slots.max_writers) == (6, 3)
        release = anyio.Event()
        results: dict[str, SubagentResult] = {}

        async def other_writer() -> None:
            async with slots.hold(WriteClaim.of(["src"], runner.services.sandbox)):
                await release.wait()

        async def child(name: str, spec: SubagentSpec) -> None:
            results[name] = await runner.run(spec)

        with anyio.fail_after(30):
            async with anyio.create_task_group() as tg:
                tg.start_soon(other_writer)
                await wait_until(lambda: slots.writers == 1)
                tg.start_soon(child, "w", runner.spec("CHILD-W: edit", write_paths=("src/app.py",)))
                tg.start_soon(child, "r", runner.spec("CHILD-R: look", read_only=True))
                await wait_until(lambda: "r" in results)
                # The reader ran beside the writer; the overlapping writer never started.
                assert results["r"].answer == "looked"
                assert requests_of(server, "CHILD-W") == [] and slots.waiting == 1
                release.set()
        assert results["w"].answer == "edited"
        assert (slots.running, slots.writers, slots.waiting) == (0, 0, 0)
