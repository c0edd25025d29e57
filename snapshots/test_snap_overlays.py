from __future__ import annotations

import time
from pathlib import Path

from snap_scripts import approval_turn, plan_approval_turn, subagent_approval_turn, write_scope_turn
from snap_support import WORKSPACE, scripted, send, type_text

from reasonix_tui.screens.overlay import Overlay
from reasonix_tui.services import McpServerView, ModelProbe


async def until(pilot, predicate, within: float = 60.0) -> None:
    """Pause until ``predicate()`` holds: at once when it does, failing only past
    a deadline a loaded machine does not miss."""
    deadline = time.monotonic() + within
    while not predicate():
        if time.monotonic() > deadline:
            raise AssertionError("the screen never reached the state to snapshot")
        await pilot.pause(0.02)


def overlay_shown(pilot) -> bool:
    return isinstance(pilot.app.screen, Overlay)


def _note(pilot) -> str:
    line = pilot.app.screen.query_one("#note")
    return str(line.render()) if line.display else ""


class TestApproval:
    def test_dialog_with_diff(self, snap) -> None:
        async def run(pilot) -> None:
            await send(pilot, "Change the greeting to Hello")
            await until(pilot, lambda: overlay_shown(pilot))
            await pilot.pause(0.3)

        assert snap(scripted(turns=[approval_turn()]), run)

    def test_dialog_for_a_subagent(self, snap) -> None:
        async def run(pilot) -> None:
            await send(pilot, "Fix the backend with a subagent")
            await until(pilot, lambda: overlay_shown(pilot))
            await pilot.pause(0.3)

        assert snap(scripted(turns=[subagent_approval_turn()]), run)


class TestWriteScopeGrant:
    def test_grant_dialog(self, snap) -> None:
        async def run(pilot) -> None:
            await send(pilot, "Regenerate the shared bindings")
            await until(pilot, lambda: overlay_shown(pilot))
            await pilot.pause(0.3)

        assert snap(scripted(turns=[write_scope_turn()]), run)


class TestPlanApproval:
    def test_plan_dialog(self, snap) -> None:
        async def run(pilot) -> None:
            await send(pilot, "Rename greet, wait for my approval")
            await until(pilot, lambda: overlay_shown(pilot))
            await pilot.pause(0.3)

        assert snap(scripted(turns=[plan_approval_turn()]), run)


class TestMenus:
    def test_slash_menu(self, snap) -> None:
        async def run(pilot) -> None:
            await type_text(pilot, "/")

        assert snap(scripted(), run)

    def test_slash_menu_filtered(self, snap) -> None:
        async def run(pilot) -> None:
            await type_text(pilot, "/re")

        assert snap(scripted(), run)

    def test_at_menu(self, snap) -> None:
        async def run(pilot) -> None:
            await type_text(pilot, "explain @")

        assert snap(scripted(), run)

    def test_at_menu_subdirectory(self, snap) -> None:
        async def run(pilot) -> None:
            await type_text(pilot, "explain @s")
            await pilot.press("tab")

        assert snap(scripted(), run)


class TestScreens:
    def test_help(self, snap) -> None:
        async def run(pilot) -> None:
            await send(pilot, "/help")

        assert snap(scripted(), run)

    def test_mcp_empty(self, snap) -> None:
        async def run(pilot) -> None:
            await send(pilot, "/mcp")

        assert snap(scripted(), run)

    def test_mcp_servers(self, snap) -> None:
        servers = [
            McpServerView(
                name="filesystem", transport="stdio", state="ready", tools=11, resources=3
            ),
            McpServerView(
                name="github", transport="http", state="ready", tools=26, prompts=4, reconnects=1
            ),
            McpServerView(
                name="browser",
                transport="stdio",
                state="failed",
                reconnects=3,
                error_class="TimeoutError",
            ),
        ]

        async def run(pilot) -> None:
            await send(pilot, "/mcp")

        assert snap(scripted(servers=servers), run)

    def test_model_picker(self, snap) -> None:
        # The provider's /models answered: one id the config does not list, marked.
        probe = ModelProbe(models=("deepseek-flash", "deepseek-v4-pro", "deepseek-v4-flash-exp"))

        async def run(pilot) -> None:
            await send(pilot, "/model")
            await until(pilot, lambda: "listed by the provider" in _note(pilot))

        assert snap(scripted(probe=probe), run)

    def test_model_picker_probe_failed(self, snap) -> None:
        async def run(pilot) -> None:
            await send(pilot, "/model")
            await until(pilot, lambda: "couldn't list models" in _note(pilot))

        assert snap(scripted(probe=ModelProbe(error="HTTP 401")), run)

    def test_clear_confirm(self, snap) -> None:
        async def run(pilot) -> None:
            await send(pilot, "/clear")

        assert snap(scripted(), run)

    def test_setup(self, snap) -> None:
        async def run(pilot) -> None:
            await type_text(pilot, "sk-secret")

        assert snap(scripted(api_key_missing=True), run)

    def test_setup_presets(self, snap, monkeypatch) -> None:
        from reasonix_core.provider.presets import PRESETS
        from reasonix_testkit.tui import preset_choices

        for entry in PRESETS:
            if entry.api_key_env:
                monkeypatch.delenv(entry.api_key_env, raising=False)
        choices = preset_choices(Path("/nonexistent/.reasonix"))

        async def run(pilot) -> None:
            await pilot.press("down", "down")

        assert snap(scripted(api_key_missing=True, choices=choices), run)

    def test_setup_preset_key(self, snap, monkeypatch) -> None:
        from reasonix_core.provider.presets import PRESETS
        from reasonix_testkit.tui import preset_choices

        for entry in PRESETS:
            if entry.api_key_env:
                monkeypatch.delenv(entry.api_key_env, raising=False)
        choices = preset_choices(Path("/nonexistent/.reasonix"))

        async def run(pilot) -> None:
            await pilot.press("down", "down", "enter")  # OpenRouter
            await type_text(pilot, "sk-or-secret")

        assert snap(scripted(api_key_missing=True, choices=choices), run)

    def test_trust_dialog(self, snap) -> None:
        from reasonix_core.trust import ProjectReview, RiskySetting
        from reasonix_tui.screens.trust import TrustScreen

        review = ProjectReview(
            folder=WORKSPACE,
            risky=(
                RiskySetting(
                    "reasonix.toml",
                    "providers[0] 'deepseek' base_url",
                    '"http://evil.example:8080/v1"',
                ),
                RiskySetting("reasonix.toml", "permissions.preset", '"yolo"'),
                RiskySetting("reasonix.toml", "sandbox.bash", '"off"'),
                RiskySetting(".mcp.json", "mcpServers 'helper' command", '"sh -c ./setup.sh"'),
            ),
            digest="0" * 64,
        )

        async def run(pilot) -> None:
            pilot.app.push_screen(TrustScreen(review))

        assert snap(scripted(), run)


def _cache_report():
    from reasonix_core.agent.cache_report import build_report

    def request(n: int, hit: int, miss: int, cost: float, **extra: object) -> dict:
        return {
            "request": n,
            "source": "executor",
            "prompt_tokens": hit + miss,
            "cache_hit_tokens": hit,
            "cache_miss_tokens": miss,
            "completion_tokens": 120,
            "cost": cost,
            "model": "deepseek-flash",
            **extra,
        }

    brk = {
        "reason": "model",
        "first_diff_byte": 0,
        "rebilled_tokens": 9_842,
        "rebilled_cost": 0.006278,
        "context": ["", '["deepseek-flash","high"]', '["deepseek-v4-pro","high"]'],
    }
    return build_report(
        "20261201-093000-a1b2c3",
        [
            request(1, 0, 9_600, 0.001512),
            request(2, 9_584, 258, 0.000139),
            request(3, 0, 10_020, 0.006853, model="deepseek-v4-pro", **{"break": brk}),
        ],
    )


class TestCache:
    def test_cache_view(self, snap) -> None:
        async def run(pilot) -> None:
            await send(pilot, "/cache")

        assert snap(scripted(report=_cache_report()), run)

    def test_model_switch_confirms_the_cache_loss(self, snap) -> None:
        from datetime import UTC, datetime

        from reasonix_core.agent.cache_preview import RebillPreview

        preview = RebillPreview(
            tokens=48_210,
            cost=0.0071,
            currency="USD",
            peak=True,
            off_peak_at=datetime(2026, 12, 1, 10, 0, tzinfo=UTC),
        )

        async def run(pilot) -> None:
            await send(pilot, "/model deepseek-v4-pro")

        assert snap(scripted(preview=preview), run)


class TestQuestion:
    def test_question_with_a_typed_answer(self, snap) -> None:
        from reasonix_core.permission.approver import Question

        async def run(pilot) -> None:
            screen = pilot.app.session
            questions = [Question(question="Which database?", options=("sqlite", "postgres"))]
            pilot.app.run_worker(screen.approver.ask(questions))
            await until(pilot, lambda: overlay_shown(pilot))
            await pilot.pause(0.3)
            await type_text(pilot, "duckdb")

        assert snap(scripted(), run)
