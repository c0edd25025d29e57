"""An attacker's review of the search tools' walk by descriptors (issue 34).

Each test plays one hostile input against ``grep``, ``glob`` and ``ls`` as the
agent calls them (a real ToolContext whose ``read_denied`` is the permission
policy's). Races are made deterministic by doing the attacker's swap at the
exact step between the walk's listing and the tool's open (a wrapper around
the step), rather than by racing a thread.
"""

from __future__ import annotations

import os
import re
import warnings
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest

from reasonix_core.permission.policy import Policy
from reasonix_core.tool.builtin import _walk
from reasonix_core.tool.builtin import grep as grep_mod
from reasonix_core.tool.sandbox import SandboxPolicy
from tests.core.tool_helpers import call_tool, policy_for, walk_ctx

SECRET = "TOPSECRET"
# What a hidden file holds besides SECRET (a search result echoes its pattern, not this).
BODY = "s3cr3t-body"


def _all_three() -> tuple[tuple[str, dict[str, Any]], ...]:
    return (
        ("grep", {"pattern": "."}),
        ("grep", {"pattern": SECRET}),
        ("grep", {"pattern": ".", "glob": "**/*"}),
        ("glob", {"pattern": "**/*"}),
        ("glob", {"pattern": "**/.*"}),
        ("ls", {"path": ".", "recursive": True}),
    )


@pytest.fixture
def arena(tmp_path: Path) -> SimpleNamespace:
    """A workspace, a protected folder (~/.ssh-like) and an outside folder."""
    ws = tmp_path / "ws"
    (ws / "src").mkdir(parents=True)
    (ws / "src" / "app.py").write_text("visible line\n")
    ssh = tmp_path / "home" / ".ssh"
    ssh.mkdir(parents=True)
    (ssh / "id_rsa").write_text(f"{SECRET} {BODY}\n")
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "passwd").write_text(f"{SECRET} {BODY}\n")
    return SimpleNamespace(tmp=tmp_path, ws=ws, ssh=ssh, outside=outside)


def _assert_hidden(text: str, *names: str) -> None:
    assert BODY not in text, text
    for name in names:
        assert name not in text, (name, text)


# ============================================================ findings (failed before the fix)

# -- 1. the required-literal check skipped files a POSIX class matches ------------------------
#
# ``re`` parses ``[[:alpha:]]`` as a set followed by a literal ``]``; ``regex``
# (which runs the search) reads it as the POSIX class. The literal check took
# ``]`` as required and skipped every file without one: "no matches" for a
# pattern that matches.


@pytest.mark.parametrize(
    ("pattern", "line"),
    [
        ("[[:alpha:]]+", "hello"),
        ("[[:digit:]]x", "5x"),
        ("a[[:space:]]b", "a b"),
        ("[[:^alpha:]]k", "-k"),
        ("x[[:alnum:]]", "x1"),
        ("[[:upper:]][[:lower:]]", "Ab"),
    ],
)
async def test_posix_class_is_not_skipped_by_the_literal_check(
    arena: SimpleNamespace, pattern: str, line: str
) -> None:
    (arena.ws / "src" / "p.txt").write_text(line + "\n")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", FutureWarning)  # re: "possible nested set"
        r = await call_tool(walk_ctx(arena.tmp, arena.ws, policy_for(arena.ws)), "grep", pattern=pattern)
    assert f"src/p.txt:1:{line}" in r.text.splitlines(), r.text


# -- 2. a symlink listed by the walk is followed by its path: a folder on that -----------------
#       path swapped for a link afterwards carried the read to a deny-ruled or
#       outside file (only forbid_read was judged on what was opened)


def _swap_folder_before(monkeypatch: pytest.MonkeyPatch, method: str, folder: Path, to: Path):
    """Before ``_Search.<method>`` runs (after the walk listed the entry), the
    attacker renames ``folder`` away and puts a symlink to ``to`` in its place."""
    original = getattr(grep_mod._Search, method)
    done: list[bool] = []

    def swapped(self: Any, *args: Any, **kwargs: Any) -> Any:
        if not done:
            done.append(True)
            folder.rename(folder.with_name(folder.name + ".moved"))
            folder.symlink_to(to, target_is_directory=True)
        return original(self, *args, **kwargs)

    monkeypatch.setattr(grep_mod._Search, method, swapped)
    return done


@pytest.mark.parametrize("target", ["deny-ruled", "outside"])
async def test_a_folder_swapped_under_a_listed_link_reveals_nothing(
    arena: SimpleNamespace, monkeypatch: pytest.MonkeyPatch, target: str
) -> None:
    ws = arena.ws
    (ws / "secrets").mkdir()
    (ws / "secrets" / "passwd").write_text(f"{SECRET} {BODY}\n")
    (ws / "a").mkdir()
    (ws / "a" / "harmless").write_text("fine\n")
    (ws / "a" / "passwd").symlink_to("harmless")  # a link the walk judges harmless
    to = ws / "secrets" if target == "deny-ruled" else arena.outside
    done = _swap_folder_before(monkeypatch, "search_entry", ws / "a", to)
    ctx = walk_ctx(arena.tmp, ws, policy_for(ws, deny=("Read(secrets/**)",)))
    r = await call_tool(ctx, "grep", pattern=SECRET, glob="passwd")
    assert done, "the swap was not exercised"
    _assert_hidden(r.text)


async def test_a_folder_swapped_under_a_grepped_file_reveals_nothing(
    arena: SimpleNamespace, monkeypatch: pytest.MonkeyPatch
) -> None:
    # grep given one file: checked by name, then opened by path.
    ws = arena.ws
    (ws / "secrets").mkdir()
    (ws / "secrets" / "k.txt").write_text(f"{SECRET} {BODY}\n")
    (ws / "a").mkdir()
    (ws / "a" / "k.txt").write_text("fine\n")
    done = _swap_folder_before(monkeypatch, "search_file", ws / "a", ws / "secrets")
    ctx = walk_ctx(arena.tmp, ws, policy_for(ws, deny=("Read(secrets/**)",)))
    r = await call_tool(ctx, "grep", pattern=SECRET, path="a/k.txt")
    assert done
    _assert_hidden(r.text)


# -- 3. folders deeper than the walk holds open were dropped without a word -------------------


async def test_grep_and_glob_say_when_folders_were_too_deep_to_search(
    arena: SimpleNamespace, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(_walk, "WALK_MAX_DEPTH", 4)
    deep = arena.ws.joinpath(*["n"] * 8)
    deep.mkdir(parents=True)
    (deep / "bottom.py").write_text("needle\n")
    ctx = walk_ctx(arena.tmp, arena.ws, policy_for(arena.ws))
    r = await call_tool(ctx, "grep", pattern="needle")
    assert "not searched" in r.text and "deep" in r.text, r.text
    r = await call_tool(ctx, "glob", pattern="**/*.py")
    assert "not searched" in r.text and "deep" in r.text, r.text


# -- 4. the walk holds a descriptor per level: deep trees walked at once starved the process ----
#
# The old walk held none between listings. Read-only calls run concurrently, so
# a cloned repository nested 200 deep and a few parallel greps took every
# descriptor under a common soft limit (1024 on Linux, 256 on macOS): the
# provider's socket, checkpoints and the transcript then failed with EMFILE.

_STARVE = """
import os, resource, sys
from pathlib import Path
from reasonix_core.tool.builtin import _walk
from reasonix_core.tool.sandbox import SandboxPolicy

resource.setrlimit(resource.RLIMIT_NOFILE, (160, resource.getrlimit(resource.RLIMIT_NOFILE)[1]))
ws = Path(sys.argv[1]).resolve()
sandbox = SandboxPolicy(workspace=ws, temp_dir=ws)
starved = []

def probe(parts):
    # What the rest of the process may need at this moment: a few descriptors
    # (a socket, a checkpoint, the transcript, a subprocess's pipes).
    held = []
    try:
        for _ in range(12):
            held.append(os.open("/dev/null", os.O_RDONLY))
    except OSError:
        starved.append(len(parts))
    finally:
        for fd in held:
            os.close(fd)
    return True

# Four walks suspended at their deepest point at once (as four concurrent
# read-only calls would be), stepped one after the other: deterministic.
walkers = [_walk.Walker(root=ws, sandbox=sandbox, descend=probe) for _ in range(4)]
walks = [iter(w) for w in walkers]
for walk in walks:
    for entry in walk:
        if entry.name == "leaf.txt":
            break
for walk in walks:
    for entry in walk:
        pass
print(len(starved), sum(w.too_deep for w in walkers))
"""


@pytest.mark.skipif(not Path("/dev/null").exists(), reason="needs /dev/null")
def test_concurrent_deep_walks_leave_descriptors_for_the_rest_of_the_process(
    tmp_path: Path,
) -> None:
    import subprocess
    import sys

    ws = tmp_path / "ws"
    deep = ws.joinpath(*["d"] * 60)
    deep.mkdir(parents=True)
    (deep / "leaf.txt").write_text("x\n")
    out = subprocess.run(
        [sys.executable, "-c", _STARVE, str(ws)], capture_output=True, text=True, timeout=300
    )
    assert out.returncode == 0, out.stderr
    starved, too_deep = map(int, out.stdout.split())
    assert starved == 0, "a walk took the descriptors the process needs"
    assert too_deep >= 1  # and it said so (grep and glob put it in their notes)


# -- 5. "did you mean" named files the deny rules hide from every listing ----------------------


@pytest.mark.parametrize(
    ("name", "args"),
    [
        ("grep", {"pattern": "x", "path": ".en"}),
        ("glob", {"pattern": "*", "path": ".envv"}),
        ("ls", {"path": ".en"}),
        ("grep", {"pattern": "x", "path": "src/.en"}),
    ],
)
async def test_a_missing_path_suggests_no_denied_name(
    arena: SimpleNamespace, name: str, args: dict[str, Any]
) -> None:
    ws = arena.ws
    (ws / ".env").write_text("x\n")
    (ws / "src" / ".env").write_text("x\n")
    (ws / ".envrc").write_text("x\n")
    (ws / "src" / ".envrc").write_text("x\n")
    ctx = walk_ctx(arena.tmp, ws, policy_for(ws, deny=("Read(**/.env)",)))
    r = await call_tool(ctx, name, **args)
    assert "does not exist" in r.text
    assert ".env?" not in r.text and ".env," not in r.text, r.text
    assert ".envrc" in r.text  # the hint still works for what may be seen


# -- 6. a .gitignore that is a link was read through: a protected file's lines became -----------
#       ignore rules (read, and an oracle: which planted names vanish). Git itself
#       never follows a .gitignore link (2.32+); neither does the walk now.


@pytest.mark.parametrize("where", ["root", "nested"])
async def test_a_gitignore_link_to_a_protected_file_is_not_read(
    arena: SimpleNamespace, where: str
) -> None:
    ws = arena.ws
    (arena.ssh / "config").write_text("Host-github.com\n")
    folder = ws if where == "root" else ws / "src"
    (folder / ".gitignore").symlink_to(arena.ssh / "config")
    (folder / "Host-github.com").write_text("probe\n")  # vanishes if the key line is a rule
    ctx = walk_ctx(arena.tmp, ws, policy_for(ws, forbid=(arena.ssh,)))
    for name, args in (("glob", {"pattern": "**/Host-*"}), ("grep", {"pattern": "probe"})):
        r = await call_tool(ctx, name, **args)
        assert "Host-github.com" in r.text, (name, r.text)
    # a regular .gitignore still works
    (folder / ".gitignore").unlink()
    (folder / ".gitignore").write_text("Host-*\n")
    r = await call_tool(ctx, "glob", pattern="**/Host-*")
    assert "Host-github.com" not in r.text, r.text


# ============================================================ guarantees that held (pinned)

# -- workspace confinement: symlinks to /, to the protected folder, to ruled files, loops -----


@pytest.mark.parametrize("kind", ["root", "ssh-dir", "ssh-file", "outside-dir", "outside-file"])
async def test_planted_links_never_carry_a_search_out(arena: SimpleNamespace, kind: str) -> None:
    ws = arena.ws
    target = {
        "root": Path("/"),
        "ssh-dir": arena.ssh,
        "ssh-file": arena.ssh / "id_rsa",
        "outside-dir": arena.outside,
        "outside-file": arena.outside / "passwd",
    }[kind]
    (ws / "src" / "planted").symlink_to(target)
    ctx = walk_ctx(arena.tmp, ws, policy_for(ws, forbid=(arena.ssh,)))
    for name, args in _all_three():
        r = await call_tool(ctx, name, **args)
        _assert_hidden(r.text, "id_rsa", "passwd")
        if name == "ls" and kind in ("ssh-dir", "ssh-file"):
            assert "planted" not in r.text  # a link into a protected folder is not even named


async def test_a_link_to_a_deny_ruled_file_is_neither_searched_nor_listed(
    arena: SimpleNamespace,
) -> None:
    ws = arena.ws
    (ws / "secrets").mkdir()
    (ws / "secrets" / "k").write_text(f"{SECRET} {BODY}\n")
    (ws / "src" / "alias").symlink_to(ws / "secrets" / "k")
    (ws / "src" / "alias_dir").symlink_to(ws / "secrets")
    ctx = walk_ctx(arena.tmp, ws, policy_for(ws, deny=("Read(secrets/**)",)))
    for name, args in _all_three():
        r = await call_tool(ctx, name, **args)
        _assert_hidden(r.text, "alias", "secrets/k")


async def test_symlink_loops_end(arena: SimpleNamespace) -> None:
    ws = arena.ws
    (ws / "loop").symlink_to("loop")
    (ws / "src" / "up").symlink_to("..")
    (ws / "src" / "a").symlink_to("b")
    (ws / "src" / "b").symlink_to("a")
    ctx = walk_ctx(arena.tmp, ws, policy_for(ws))
    for name, args in _all_three():
        r = await call_tool(ctx, name, **args)
        assert not r.is_error, (name, r.text)
    r = await call_tool(ctx, "grep", pattern="visible")
    assert r.text.splitlines() == ["src/app.py:1:visible line"]


async def test_a_folder_swapped_for_a_link_mid_walk_is_not_entered(
    arena: SimpleNamespace,
) -> None:
    ws = arena.ws
    (ws / "sub").mkdir()
    (ws / "sub" / "x.txt").write_text("x\n")
    sandbox = SandboxPolicy(workspace=ws, temp_dir=arena.tmp, forbid_read=(arena.ssh,))

    def descend(parts: tuple[str, ...]) -> bool:
        if parts == ("sub",):  # listed as a folder; now the attacker swaps it
            (ws / "sub").rename(ws / "sub.moved")
            (ws / "sub").symlink_to(arena.ssh, target_is_directory=True)
        return True

    walker = _walk.Walker(root=ws.resolve(), sandbox=sandbox, descend=descend)
    seen = [e.rel for e in walker]
    assert "sub" in seen
    assert not any(s.startswith("sub/") for s in seen), seen
    assert walker.unreadable == 1


async def test_a_file_swapped_for_a_link_after_listing_is_not_read(
    arena: SimpleNamespace, monkeypatch: pytest.MonkeyPatch
) -> None:
    ws = arena.ws
    victim = ws / "src" / "app.py"
    original = grep_mod._Search.search_entry

    def swapped(self: Any, entry: Any) -> None:
        if entry.name == "app.py":
            victim.unlink()
            victim.symlink_to(arena.outside / "passwd")
        original(self, entry)

    monkeypatch.setattr(grep_mod._Search, "search_entry", swapped)
    r = await call_tool(walk_ctx(arena.tmp, ws, policy_for(ws)), "grep", pattern=SECRET)
    _assert_hidden(r.text)


async def test_a_hard_link_is_judged_by_its_own_name_as_read_file_judges_it(
    arena: SimpleNamespace,
) -> None:
    # Deny rules and forbid_read are about paths: a hard link is another path
    # to the same file. The search tools judge it as read_file does (by the
    # name it is reached by); making one needs the protected file visible,
    # which sandboxed bash never has.
    ws = arena.ws
    (ws / "secrets").mkdir()
    (ws / "secrets" / "k").write_text(f"{SECRET} {BODY}\n")
    os.link(ws / "secrets" / "k", ws / "src" / "same")
    ctx = walk_ctx(arena.tmp, ws, policy_for(ws, deny=("Read(secrets/**)",)))
    grep = await call_tool(ctx, "grep", pattern=SECRET)
    read = await call_tool(ctx, "read_file", path="src/same")
    assert ("src/same" in grep.text) == (SECRET in read.text)
    assert "secrets/k" not in grep.text


async def test_a_workspace_named_through_a_link_keeps_its_rules(arena: SimpleNamespace) -> None:
    ws = arena.ws
    (ws / "secrets").mkdir()
    (ws / "secrets" / "k").write_text(f"{SECRET} {BODY}\n")
    via = arena.tmp / "ws-link"
    via.symlink_to(ws, target_is_directory=True)
    policy = policy_for(via, deny=(f"Read({via}/secrets/**)",), forbid=(arena.ssh,))
    ctx = walk_ctx(arena.tmp, via, policy)
    for name, args in _all_three():
        r = await call_tool(ctx, name, **args)
        _assert_hidden(r.text, "secrets/k")
    r = await call_tool(ctx, "grep", pattern="visible")
    assert r.text.splitlines() == ["src/app.py:1:visible line"]


async def test_the_real_depth_bound_walks_to_it_and_says_what_lies_past_it(
    arena: SimpleNamespace,
) -> None:
    ws = arena.ws
    near = ws.joinpath(*["d"] * (_walk.WALK_MAX_DEPTH - 2))
    near.mkdir(parents=True)
    (near / "near.py").write_text("needle near\n")
    far = near.joinpath(*["d"] * 20)
    far.mkdir(parents=True)
    (far / "far.py").write_text("needle far\n")
    ctx = walk_ctx(arena.tmp, ws, policy_for(ws))
    r = await call_tool(ctx, "grep", pattern="needle")
    assert "needle near" in r.text and "needle far" not in r.text
    assert "too deep" in r.text, r.text


# -- protected paths: neither read nor named, nor counted --------------------------------------


async def test_the_workspace_holding_a_protected_folder_shows_nothing_of_it(
    arena: SimpleNamespace,
) -> None:
    ws = arena.ws
    vault = ws / ".vault"
    (vault / "deep").mkdir(parents=True)
    (vault / "deep" / "k.txt").write_text(f"{SECRET} {BODY}\n")
    (ws / ".env").write_text(f"{SECRET} {BODY}\n")
    (ws / ".shown").write_text("x\n")
    ctx = walk_ctx(arena.tmp, ws, policy_for(ws, deny=("Read(**/.env)",), forbid=(vault,)))
    for name, args in (*_all_three(), ("grep", {"pattern": ".", "glob": ".*"})):
        r = await call_tool(ctx, name, **args)
        _assert_hidden(r.text, ".vault", "k.txt", ".env")
    # The counts in the notes leave them out too: one hidden entry (.shown).
    r = await call_tool(ctx, "ls", path=".", recursive=True)
    assert "1 hidden" in r.text, r.text
    r = await call_tool(ctx, "grep", pattern="zzz-no-such", glob=".*")
    assert "(1 file searched)" in r.text, r.text  # .shown; not .env


async def test_a_workspace_inside_a_protected_folder_is_not_searched(
    arena: SimpleNamespace,
) -> None:
    ws = arena.ssh / "project"
    ws.mkdir()
    (ws / "a.txt").write_text(f"{SECRET} {BODY}\n")
    ctx = walk_ctx(arena.tmp, ws, policy_for(ws, forbid=(arena.ssh,)))
    for name, args in _all_three():
        r = await call_tool(ctx, name, **args)
        _assert_hidden(r.text, "a.txt")


# -- Read deny rules, spelled every way --------------------------------------------------------


@pytest.mark.parametrize(
    ("rule", "hidden", "shown"),
    [
        ("Read(**/.env)", ("top/.env", "top/a/b/.env"), ("top/a/env",)),
        ("Read(secrets/**)", ("secrets/k", "secrets/d/k"), ("top/secrets.txt",)),
        ("Read(secrets/)", ("secrets/k", "secrets/d/k"), ("top/secrets.txt",)),
        ("Read(./top/../secrets)", ("secrets/k",), ("top/a/env",)),
        ("Read({ws}/secrets/d/k)", ("secrets/d/k",), ("secrets/k",)),
        ("Read(~/hk/**)", ("hk/x",), ("secrets/k",)),
        ("Read(**/*.pem)", ("top/a/c.pem",), ("top/a/env",)),
        ("Read(top/*/c.pem)", ("top/a/c.pem",), ("top/secrets.txt",)),
        ("Read(top/?/env)", ("top/a/env",), ("top/a/c.pem",)),
        ("Read(=secrets/k)", ("secrets/k",), ("secrets/d/k",)),
        ("Read(TOP/**)", (), ("top/a/env",)),  # case-sensitive, as before
    ],
)
async def test_read_deny_rules_hide_what_they_name(
    arena: SimpleNamespace,
    monkeypatch: pytest.MonkeyPatch,
    rule: str,
    hidden: tuple[str, ...],
    shown: tuple[str, ...],
) -> None:
    ws = arena.ws
    monkeypatch.setenv("HOME", str(ws))
    for rel in (
        "top/.env",
        "top/a/b/.env",
        "top/a/env",
        "secrets/k",
        "secrets/d/k",
        "top/secrets.txt",
        "hk/x",
        "top/a/c.pem",
    ):
        (ws / rel).parent.mkdir(parents=True, exist_ok=True)
        (ws / rel).write_text(f"{SECRET} {rel}\n")
    rule = rule.replace("{ws}", str(ws))
    if rule.startswith("Read(="):
        rule = "Read=" + rule[len("Read(=") : -1]
    ctx = walk_ctx(arena.tmp, ws, policy_for(ws, deny=(rule,)))
    for name, args in (
        ("grep", {"pattern": SECRET}),
        ("grep", {"pattern": SECRET, "glob": "**/*"}),
        ("glob", {"pattern": "**/*"}),
        ("ls", {"path": ".", "recursive": True}),
    ):
        r = await call_tool(ctx, name, **args)
        for rel in hidden:
            assert f"{SECRET} {rel}" not in r.text and rel not in r.text, (rule, name, r.text)
        for rel in shown:
            assert rel in r.text, (rule, name, rel, r.text)


# -- .gitignore as before ----------------------------------------------------------------------


async def test_gitignore_negations_nesting_anchors_dirs_and_stars(arena: SimpleNamespace) -> None:
    ws = arena.ws
    files = {
        "a.log": False,
        "keep.log": True,
        "sub/b.log": False,
        "build/x.py": False,
        "sub/build/y.py": False,
        "build.py": True,
        "top.py": False,
        "sub/top.py": True,
        "deep/x/gen/z.py": False,
        "deep/gen.py": True,
        "sub/n.tmp": False,
        "sub/ok.tmp": True,
        "docs/a/b/c.md": False,
        "docs/c.md": True,
    }
    for rel in files:
        (ws / rel).parent.mkdir(parents=True, exist_ok=True)
        (ws / rel).write_text("needle\n")
    (ws / ".gitignore").write_text(
        "*.log\n!keep.log\nbuild/\n/top.py\n**/gen/\ndocs/**/c.md\n!docs/c.md\n"
    )
    (ws / "sub" / ".gitignore").write_text("*.tmp\n!ok.tmp\n")
    ctx = walk_ctx(arena.tmp, ws, policy_for(ws))
    grep = await call_tool(ctx, "grep", pattern="needle")
    glob = await call_tool(ctx, "glob", pattern="**/*")
    for rel, shown in files.items():
        assert (f"{rel}:1:needle" in grep.text.splitlines()) == shown, (rel, grep.text)
        assert (rel in glob.text.splitlines()) == shown, (rel, glob.text)


# -- binary files, bounded output ---------------------------------------------------------------


async def test_binary_files_are_skipped_and_output_is_bounded(arena: SimpleNamespace) -> None:
    ws = arena.ws
    (ws / "bin.dat").write_bytes(b"needle\x00\x01\x02" * 10)
    (ws / "long.txt").write_text("needle" + "x" * 100_000 + "\n")
    (ws / "many.txt").write_text("needle\n" * 5000)
    r = await call_tool(walk_ctx(arena.tmp, ws, policy_for(ws)), "grep", pattern="needle")
    assert "bin.dat" not in r.text.replace("binary", "")
    assert len(r.text.encode()) < 200_000
    assert "results capped" in r.text and r.meta["capped"] is True


# -- the required literal: whatever the pattern, what the matcher finds is found ----------------

_HOSTILE_PATTERNS = [
    "needle",
    "(?i)NEEDLE",
    "NEEDLE",
    "needle|zzz",
    "zzz|needle",
    r"ne\x65dle",
    r"\u006eeedle",
    r"\N{LATIN SMALL LETTER N}eedle",
    "n(?#comment)eedle",
    "(?x) n e e d l e",
    "nee?dle",
    "ne{2}dle",
    "ne{0}edle",
    "needle{0}",
    "(?:needle)",
    "(needle)?x",
    "(?=needle)n",
    "(?<=a )needle",
    "[n]eedle",
    "ne[e]dle",
    r"needle\b",
    r"\bneedle$",
    "^needle",
    "(?m)^needle$",
    "(?s)needle.x",
    "needle\n",
    r"needle\Z",
    r"\Aneedle",
    "straße",
    "(?i)STRASSE",
    "(?i)straße",
    "\u212aelvin",
    "(?i)kelvin",
    "(?i)\u212aELVIN",
    "ǅ",
    "(?i)ǆ",
    "(?a)needle",
    r"\x00",
    "[[:alpha:]]eedle",
    "(?i:N)eedle",
    "n(?i:EEDLE)",
    r"(n)eed\1e",
    "n+eedle",
    "nn*eedle",
]


@pytest.mark.parametrize("pattern", _HOSTILE_PATTERNS)
@pytest.mark.parametrize("case_insensitive", [False, True])
async def test_the_literal_check_never_skips_a_line_the_pattern_matches(
    arena: SimpleNamespace, pattern: str, case_insensitive: bool
) -> None:
    import regex

    ws = arena.ws
    lines = [
        "needle x",
        "NEEDLE",
        "a needle",
        "nneedle",
        "straße",
        "STRASSE",
        "kelvin",
        "\u212aelvin",
        "KELVIN",
        "ǅ",
        "ǆ",
        "Ǆ",
        "neeedle",
        "nedle",
        "needlex",
    ]
    (ws / "src" / "t.txt").write_text("\n".join(lines) + "\n")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", FutureWarning)
        try:
            re.compile(pattern)
        except re.error:
            pytest.skip("not a pattern grep takes")
        r = await call_tool(
            walk_ctx(arena.tmp, ws, policy_for(ws)),
            "grep",
            pattern=pattern,
            path="src/t.txt",
            case_insensitive=case_insensitive,
        )
        flags = regex.MULTILINE | (regex.IGNORECASE if case_insensitive else 0)
        oracle = regex.compile(pattern, flags)
    want = [f"src/t.txt:{n}:{ln}" for n, ln in enumerate(lines, 1) if oracle.search(ln)]
    got = [] if r.text.startswith("no matches") else r.text.splitlines()
    assert got == want


# -- descriptors: many calls, and walks left mid-way --------------------------------------------


def _open_fds() -> int:
    return len(os.listdir("/proc/self/fd"))


@pytest.mark.skipif(not Path("/proc/self/fd").is_dir(), reason="needs /proc")
async def test_no_descriptor_outlives_a_call_or_an_abandoned_walk(arena: SimpleNamespace) -> None:
    ws = arena.ws
    for i in range(20):
        (ws / f"d{i}" / "e").mkdir(parents=True)
        (ws / f"d{i}" / "e" / "f.py").write_text("needle\n")
    (ws / "loop").symlink_to("loop")
    ctx = walk_ctx(arena.tmp, ws, policy_for(ws, deny=("Read(d3/**)",)))
    before = _open_fds()
    for _ in range(30):
        for name, args in _all_three():
            await call_tool(ctx, name, **args)
    assert _open_fds() == before
    sandbox = SandboxPolicy(workspace=ws, temp_dir=arena.tmp)
    walk = iter(_walk.Walker(root=ws.resolve(), sandbox=sandbox))
    for _ in range(5):
        next(walk)  # deep inside: a descriptor per level is open
    walk.close()  # type: ignore[attr-defined]
    assert _open_fds() == before

    def boom(parts: tuple[str, ...]) -> bool:
        if len(parts) == 2:
            raise RuntimeError("mid-walk")
        return True

    with pytest.raises(RuntimeError):
        list(_walk.Walker(root=ws.resolve(), sandbox=sandbox, descend=boom))
    assert _open_fds() == before

    def boom_in(directory: str) -> bool:
        if directory.endswith("/e"):
            raise RuntimeError("the policy's check failed mid-walk")
        return True

    failing = _walk.WalkFilter(denied=lambda text, is_link: False, may_deny_in=boom_in)
    with pytest.raises(RuntimeError):
        list(_walk.Walker(root=ws.resolve(), sandbox=sandbox, hide=failing))
    assert _open_fds() == before
    assert _walk._WALK_DESCRIPTORS._held == 0  # the walks' share is all given back


# -- the TUI's @ references ---------------------------------------------------------------------
#
# Finding: the deny-rule check of an ``@path`` judged the path as typed, and the
# policy resolves only its last component (it serves walks of resolved folders):
# ``@alias_dir/k`` with ``alias_dir -> secrets`` attached ``secrets/k`` past
# ``Read(secrets/**)`` (forbid_read was judged on the real path and held).
# Also, an attached folder listed the names inside protected and denied folders.


def _mention_arena(arena: SimpleNamespace) -> tuple[Path, Policy]:
    ws = arena.ws
    (ws / "key").symlink_to(arena.ssh / "id_rsa")
    (ws / "keys").symlink_to(arena.ssh)
    (ws / "secrets").mkdir()
    (ws / "secrets" / "k").write_text(f"{SECRET} {BODY}\n")
    (ws / "alias").symlink_to(ws / "secrets" / "k")
    (ws / "alias_dir").symlink_to(ws / "secrets")
    (ws / "vault").mkdir()
    (ws / "vault" / "vault-name.txt").write_text("x\n")
    policy = policy_for(ws, deny=("Read(secrets/**)",), forbid=(arena.ssh, ws / "vault"))
    return ws, policy


@pytest.mark.parametrize("mention", ["key", "keys/id_rsa", "alias", "secrets/k", "alias_dir/k"])
def test_an_at_reference_to_a_protected_or_denied_file_is_refused(
    arena: SimpleNamespace, mention: str
) -> None:
    from reasonix_core.command.mentions import expand_mentions

    ws, policy = _mention_arena(arena)
    out = expand_mentions(
        f"look at @{mention} please",
        ws,
        protected=tuple(policy.forbid_read),
        denied=lambda path: policy.read_denied("read_file", path),
    )
    assert not out.blocks and out.notices, (mention, out)
    assert BODY not in "".join(out.blocks)
    ok = expand_mentions("@src/app.py", ws, denied=lambda p: policy.read_denied("read_file", p))
    assert "visible line" in "".join(ok.blocks)


def test_an_attached_folder_lists_nothing_protected_or_denied(arena: SimpleNamespace) -> None:
    from reasonix_core.command.mentions import expand_mentions

    ws, policy = _mention_arena(arena)
    out = expand_mentions(
        "@.",
        ws,
        protected=tuple(policy.forbid_read),
        denied=lambda path: policy.read_denied("read_file", path),
    )
    listing = "".join(out.blocks)
    assert "app.py" in listing
    for name in ("vault", "vault-name.txt", "secrets", "alias", "key"):
        assert name not in listing, (name, listing)


@pytest.mark.parametrize("into", ["protected", "denied"])
def test_an_at_reference_swapped_after_its_check_attaches_nothing_hidden(
    arena: SimpleNamespace, monkeypatch: pytest.MonkeyPatch, into: str
) -> None:
    from reasonix_core.command import mentions

    ws, policy = _mention_arena(arena)
    (ws / "a").mkdir()
    (ws / "a" / "id_rsa").write_text("harmless\n")
    (ws / "secrets" / "id_rsa").write_text(f"{SECRET} {BODY}\n")
    to = arena.ssh if into == "protected" else ws / "secrets"
    attach = mentions._file_block

    def swap_then_attach(*args: Any, **kwargs: Any) -> Any:
        (ws / "a").rename(ws / "a.moved")  # after every check, before the open
        (ws / "a").symlink_to(to, target_is_directory=True)
        return attach(*args, **kwargs)

    monkeypatch.setattr(mentions, "_file_block", swap_then_attach)
    out = mentions.expand_mentions(
        "@a/id_rsa",
        ws,
        protected=tuple(policy.forbid_read),
        denied=lambda path: policy.read_denied("read_file", path),
    )
    assert BODY not in "".join(out.blocks), out
