"""A large paste collapses to ``[Pasted text #1 +400 lines]`` (issue 30 item 5): in
the composer, in the transcript (live and resumed), in the prompt history, while
the model gets every byte. Over the real engine against the loopback fixture."""

from __future__ import annotations

import json
from pathlib import Path

from textual import events

from reasonix_core.checkpoint.timeline import read_timeline
from reasonix_core.pasted import collapse
from reasonix_testkit import Reply
from reasonix_tui.app import ReasonixApp
from reasonix_tui.engine import EngineServices
from reasonix_tui.pasted_text import PromptText, expand, join
from reasonix_tui.prompt_history import PromptHistory
from reasonix_tui.widgets.blocks import UserBlock
from reasonix_tui.widgets.composer import Composer
from tests.tui.tui_helpers import session, type_text, until

SIZE = (100, 32)
# 400 lines with what a careless substitution would mangle: backslash groups, $'.
LOG = "\n".join(f"line {n}: \\1 \\g<0> $' $& ok" for n in range(1, 401))


def app_for(workspace: Path, home: Path, **kwargs: object) -> ReasonixApp:
    services = EngineServices(workspace, home=home, permission_mode="yolo", **kwargs)  # type: ignore[arg-type]
    return ReasonixApp(services, cursor_blink=False)


def last_user(body: bytes) -> str:
    users = [m for m in json.loads(body)["messages"] if m["role"] == "user"]
    return users[-1]["content"]


async def paste(composer: Composer, text: str) -> None:
    """As the terminal driver does: to the app, which forwards it to the focus."""
    composer.focus()
    composer.app.post_message(events.Paste(text))


def drawn(screen) -> list[str]:  # type: ignore[no-untyped-def]
    return [str(b.text) for b in screen.query(UserBlock)]


async def test_a_large_paste_collapses_and_the_model_gets_all_of_it(
    workspace: Path, home: Path, configured
) -> None:  # type: ignore[no-untyped-def]
    configured.enqueue(Reply(content="read it"))
    async with app_for(workspace, home).run_test(size=SIZE) as pilot:
        screen = session(pilot)
        composer = screen.query_one(Composer)
        await type_text(pilot, "why does this fail? ")
        await paste(composer, LOG.replace("\n", "\r"))  # as a terminal sends newlines
        await until(pilot, lambda: "[Pasted" in composer.text, 30)
        assert composer.text == "why does this fail? [Pasted text #1 +400 lines]"
        await type_text(pilot, " thanks")
        await pilot.press("enter")
        await until(pilot, lambda: len(configured.requests) >= 1 and not screen.busy, 30)
        assert drawn(screen) == ["why does this fail? [Pasted text #1 +400 lines] thanks"]
    sent = last_user(configured.requests[0].body)
    assert sent.startswith(f"why does this fail? {LOG} thanks")
    assert sent.count("line 400: \\1 \\g<0> $' $& ok") == 1

    # Resumed: the transcript draws the same chip; the request resends every byte.
    configured.enqueue(Reply(content="again"))
    async with app_for(workspace, home, continue_last=True).run_test(size=SIZE) as pilot:
        screen = session(pilot)
        await until(pilot, lambda: bool(drawn(screen)), 30)
        assert drawn(screen) == ["why does this fail? [Pasted text #1 +400 lines] thanks"]
        # So do /resume's list and /rewind's.
        (listed,) = screen.services.list_sessions()
        assert listed.title == "why does this fail? [Pasted text #1 +400 lines] thanks"
        (saved,) = (home / "sessions").glob("*/*.jsonl")
        heads = [turn.head for turn in read_timeline(saved).turns]
        assert heads == ["why does this fail? [Pasted text #1 +400 lines] thanks"]
        await type_text(pilot, "and now?")
        await pilot.press("enter")
        await until(pilot, lambda: len(configured.requests) >= 2 and not screen.busy, 30)
    earlier = [m for m in configured.requests[1].json["messages"] if m["role"] == "user"][0]
    assert earlier["content"] == sent
    assert all("meta" not in m for m in configured.requests[1].json["messages"])


async def test_chips_number_per_prompt_and_backspace_takes_one_whole(
    workspace: Path, home: Path, configured
) -> None:  # type: ignore[no-untyped-def]
    first, second, third = ("a" * 900, "b\n" * 20, "c" * 1200)
    configured.enqueue(Reply(content="one"), Reply(content="two"))
    async with app_for(workspace, home).run_test(size=SIZE) as pilot:
        screen = session(pilot)
        composer = screen.query_one(Composer)
        await paste(composer, first)
        await until(pilot, lambda: composer.text == "[Pasted text #1 +900 chars]", 30)
        await paste(composer, second)
        await until(pilot, lambda: composer.text.endswith("[Pasted text #2 +20 lines]"), 30)
        await pilot.press("backspace")  # the whole second chip, not its "]"
        assert composer.text == "[Pasted text #1 +900 chars]"
        await paste(composer, third)  # a number not used before (undo stays right)
        await until(pilot, lambda: "#3 +1200 chars" in composer.text, 30)
        await pilot.press("enter")
        await until(pilot, lambda: len(configured.requests) >= 1 and not screen.busy, 30)
        # The next prompt numbers from #1 again.
        await paste(composer, second)
        await until(pilot, lambda: composer.text == "[Pasted text #1 +20 lines]", 30)
        await pilot.press("enter")
        await until(pilot, lambda: len(configured.requests) >= 2 and not screen.busy, 30)
        assert drawn(screen) == [
            "[Pasted text #1 +900 chars][Pasted text #3 +1200 chars]",
            "[Pasted text #1 +20 lines]",
        ]
    assert last_user(configured.requests[0].body).startswith(first + third)
    assert last_user(configured.requests[1].body).startswith(second)


async def test_a_small_paste_stays_inline(workspace: Path, home: Path, configured) -> None:  # type: ignore[no-untyped-def]
    small = "\n".join(f"row {n}" for n in range(8))  # 8 lines, under 800 characters
    async with app_for(workspace, home).run_test(size=SIZE) as pilot:
        composer = session(pilot).query_one(Composer)
        await paste(composer, small)
        await until(pilot, lambda: bool(composer.text), 30)
        assert composer.text == small, repr(composer.text)
        assert composer.pastes == {}


async def test_up_recalls_a_pasted_prompt_collapsed_and_it_still_sends_the_paste(
    workspace: Path, home: Path, configured
) -> None:  # type: ignore[no-untyped-def]
    configured.enqueue(Reply(content="one"), Reply(content="two"), Reply(content="three"))
    async with app_for(workspace, home).run_test(size=SIZE) as pilot:
        screen = session(pilot)
        composer = screen.query_one(Composer)
        await paste(composer, LOG)
        await until(pilot, lambda: composer.text == "[Pasted text #1 +400 lines]", 30)
        await type_text(pilot, " summarise")
        await pilot.press("enter")
        await until(pilot, lambda: len(configured.requests) >= 1 and not screen.busy, 30)
        await type_text(pilot, "plain one")
        await pilot.press("enter")
        await until(pilot, lambda: len(configured.requests) >= 2 and not screen.busy, 30)
        await pilot.press("up", "up")
        assert composer.text == "[Pasted text #1 +400 lines] summarise"
        await pilot.press("enter")
        await until(pilot, lambda: len(configured.requests) >= 3 and not screen.busy, 30)
    assert last_user(configured.requests[2].body).startswith(f"{LOG} summarise")

    # A restart reads the pastes back from the saved prompt history.
    async with app_for(workspace, home).run_test(size=SIZE) as pilot:
        screen = session(pilot)
        composer = screen.query_one(Composer)
        await until(pilot, lambda: screen.prompt_history is not None, 30)
        await until(pilot, lambda: len(composer.prompt_history) >= 2, 30)
        recalled = composer.prompt_history[-1]
        assert isinstance(recalled, PromptText) and recalled.expanded()[0] == f"{LOG} summarise"


def test_the_saved_prompt_history_keeps_pastes_and_skips_hostile_lines(tmp_path: Path) -> None:
    path = tmp_path / "history.jsonl"
    history = PromptHistory(path)
    history.append(PromptText("[Pasted text #1 +900 chars] go", {1: "x" * 900}))
    history.append("plain")
    with path.open("a") as out:
        for hostile in (
            {"prompt": 3, "pastes": {}},
            {"prompt": "p", "pastes": ["x"]},
            {"prompt": "q", "pastes": {"²": "x", "-1": "y", "2": 5}},
            [1, 2],
        ):
            out.write(json.dumps(hostile) + "\n")
    loaded = PromptHistory(path).load()
    assert loaded == ["[Pasted text #1 +900 chars] go", "plain", "q"]
    assert isinstance(loaded[0], PromptText) and loaded[0].pastes == {1: "x" * 900}
    assert isinstance(loaded[2], PromptText) and loaded[2].pastes == {}
    assert oct(path.stat().st_mode & 0o777) == "0o600"


def test_expand_and_collapse_round_trip_and_leave_look_alikes() -> None:
    pastes = {1: "one\n" * 10, 2: "z" * 801}
    shown = "a [Pasted text #1 +10 lines] b [Pasted text #2 +801 chars] [Pasted text #2 +3 lines] c"
    full, spans = expand(shown, pastes)
    # The look-alike (wrong size) stays literal; the others carry their text.
    assert full == f"a {pastes[1]} b {pastes[2]} [Pasted text #2 +3 lines] c"
    assert collapse(full + "\n\n<context>", spans) == shown + "\n\n<context>"
    # Spans that do not fit a (hand-edited) text are ignored, not trusted.
    from reasonix_core.pasted import PastedSpan

    assert collapse("short", [PastedSpan(start=2, length=99, number=1)]) == "short"
    assert collapse("short", [PastedSpan(start=-1, length=2, number=1)]) == "short"


def test_queued_prompts_put_back_are_renumbered() -> None:
    one = PromptText("[Pasted text #1 +900 chars] x", {1: "a" * 900})
    two = PromptText("y [Pasted text #1 +20 lines]", {1: "b\n" * 20})
    joined = join([one, "plain", two])
    assert joined == "[Pasted text #1 +900 chars] x\n\nplain\n\ny [Pasted text #2 +20 lines]"
    assert joined.expanded()[0] == f"{'a' * 900} x\n\nplain\n\ny " + "b\n" * 20


async def test_the_cursor_steps_over_a_chip_so_typing_never_breaks_it(
    workspace: Path, home: Path, configured
) -> None:  # type: ignore[no-untyped-def]
    configured.enqueue(Reply(content="ok"))
    async with app_for(workspace, home).run_test(size=SIZE) as pilot:
        screen = session(pilot)
        composer = screen.query_one(Composer)
        await type_text(pilot, "ab")
        await paste(composer, LOG)
        chip = "[Pasted text #1 +400 lines]"
        await until(pilot, lambda: composer.text == f"ab{chip}", 30)
        await pilot.press("left")  # from after the chip: to its start, in one press
        assert composer.cursor_location == (0, 2)
        await type_text(pilot, "X")
        await pilot.press("right")  # over the chip, to its end
        assert composer.cursor_location == (0, 3 + len(chip))
        await type_text(pilot, "Y")
        await pilot.press("home", "right", "right", "right", "right")  # a, b, X, chip
        assert composer.cursor_location == (0, 3 + len(chip))
        assert composer.text == f"abX{chip}Y"
        await pilot.press("left", "delete")  # Delete right before the chip takes it whole
        assert composer.text == "abXY" and composer.prompt().pastes == {}
        await pilot.press("ctrl+z")  # undo brings the chip back, and its paste with it
        await until(pilot, lambda: chip in composer.text, 30)
        await pilot.press("end", "enter")
        await until(pilot, lambda: len(configured.requests) >= 1 and not screen.busy, 30)
    assert last_user(configured.requests[0].body).startswith(f"abX{LOG}Y")


def test_a_paste_that_looks_like_host_blocks_is_redrawn_as_its_chip() -> None:
    """A pasted text holding what the replay strips (an attachment block, a context
    block, a chip look-alike) is collapsed first: the typed words after it survive."""
    from reasonix_core.messages import PASTED, Message
    from reasonix_tui.replay import UserEntry, replay_entries

    hostile = (
        '[Pasted text #1 +3 lines]\n\n<file path="secret">\nx\n</file>\n<workspace-context>\n'
        + "filler\n" * 20
    )
    shown = PromptText(f"see {chip(1, hostile)} then fix it", {1: hostile})
    full, spans = shown.expanded()
    assert full == f"see {hostile} then fix it"
    message = Message(
        role="user",
        content=full + "\n\n<workspace-context>\ncwd\n</workspace-context>",
        meta={PASTED: [span.to_record() for span in spans]},
    )
    assert replay_entries([message]) == [UserEntry(f"see {chip(1, hostile)} then fix it")]


def chip(number: int, text: str) -> str:
    from reasonix_core.pasted import chip_label

    return chip_label(number, text)


async def test_ctrl_v_of_large_app_copied_text_collapses_too(
    workspace: Path, home: Path, configured, monkeypatch
) -> None:  # type: ignore[no-untyped-def]
    """No clipboard image (no tool on PATH): Ctrl+V pastes the text the app copied,
    collapsed when large, like a terminal paste."""
    monkeypatch.setenv("PATH", "/nonexistent")
    monkeypatch.delenv("WAYLAND_DISPLAY", raising=False)
    monkeypatch.delenv("DISPLAY", raising=False)
    async with app_for(workspace, home).run_test(size=SIZE) as pilot:
        composer = session(pilot).query_one(Composer)
        pilot.app.copy_to_clipboard(LOG)
        await pilot.press("ctrl+v")
        await until(pilot, lambda: composer.text == "[Pasted text #1 +400 lines]", 30)
        assert composer.prompt().expanded()[0] == LOG


def test_a_huge_paste_is_recalled_in_session_but_not_saved(tmp_path: Path) -> None:
    from reasonix_tui.prompt_history import MAX_SAVED_PASTES

    path = tmp_path / "history.jsonl"
    history = PromptHistory(path)
    huge = "y" * (MAX_SAVED_PASTES + 1)
    history.append(PromptText("[Pasted text #1 +100001 chars]", {1: huge}))
    history.append("kept")
    assert PromptHistory(path).load() == ["kept"]
