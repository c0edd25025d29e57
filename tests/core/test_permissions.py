"""Permission rules, policy, gate and explain."""

from __future__ import annotations

import asyncio
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest

from reasonix_core.permission import (
    ApprovalDecision,
    ApprovalRequest,
    Decision,
    FailClosedApprover,
    PermissionGate,
    Policy,
    Rule,
    RuleError,
    Verdict,
    explain,
    parse_rule,
    split_rules,
)
from reasonix_core.permission.rules import split_command
from reasonix_testkit import ScriptedApprover

ALLOW, ASK, DENY = Verdict.ALLOW, Verdict.ASK, Verdict.DENY

READ_ONLY = {"read_file", "ls", "glob", "grep", "web_fetch", "todo_write", "bash_output", "ask"}


def _args(tool: str, arg: Any) -> dict[str, Any]:
    if isinstance(arg, dict):
        return arg
    if tool == "bash":
        return {"command": arg}
    if tool == "web_fetch":
        return {"url": arg}
    if tool == "move_file":
        src, dst = arg
        return {"source_path": src, "destination_path": dst}
    if arg is None:
        return {}
    return {"path": arg}


def case(
    tool: str,
    arg: Any,
    expected: Verdict,
    *,
    allow: tuple[str, ...] = (),
    ask: tuple[str, ...] = (),
    deny: tuple[str, ...] = (),
    preset: str = "ask",
    mode: str = "ask",
    id: str,
) -> Any:
    return pytest.param(tool, arg, expected, allow, ask, deny, preset, mode, id=id)


TABLE = [
    # --- Bash command prefix at a word boundary -------------------------------
    case("bash", "go test ./...", ALLOW, allow=("Bash(go test:*)",), id="prefix-args"),
    case("bash", "go test", ALLOW, allow=("Bash(go test:*)",), id="prefix-bare"),
    case("bash", "go testing", ASK, allow=("Bash(go test:*)",), id="prefix-word-boundary"),
    case("bash", "go   test  -v", ALLOW, allow=("Bash(go test:*)",), id="prefix-spacing"),
    case("bash", "gotest", ASK, allow=("Bash(go test:*)",), id="prefix-not-substring"),
    case("bash", "ls -la", ALLOW, allow=("bash(ls:*)",), id="alias-case-insensitive"),
    # --- globs and exact -------------------------------------------------------
    case("bash", "rm -rf build", DENY, deny=("Bash(rm -rf*)",), id="glob-deny"),
    case("bash", "rm -r build", ASK, deny=("Bash(rm -rf*)",), id="glob-deny-miss"),
    case("bash", "npm run build", ALLOW, allow=("Bash(npm run *)",), id="glob-allow"),
    case("bash", "npm ci", ASK, allow=("Bash(npm run *)",), id="glob-allow-miss"),
    case("bash", "npm test", ALLOW, allow=("Bash(npm test)",), id="exact"),
    case("bash", "npm test --watch", ASK, allow=("Bash(npm test)",), id="exact-no-prefix"),
    # --- Bash=<literal>: glob and shell metacharacters are plain characters ----
    case("bash", "ls *.py | wc -l", ALLOW, allow=("Bash=ls *.py | wc -l",), id="literal"),
    case("bash", "ls a.py | wc -l", ASK, allow=("Bash=ls *.py | wc -l",), id="literal-no-glob"),
    case(
        "bash",
        "make && make install",
        ALLOW,
        allow=("Bash=make && make install",),
        id="literal-compound",
    ),
    case(
        "bash",
        "make && make install && rm -rf /",
        ASK,
        allow=("Bash=make && make install",),
        id="literal-whole-only",
    ),
    # --- compound commands --------------------------------------------------------
    case(
        "bash",
        "pytest && git push",
        DENY,
        allow=("Bash(pytest:*)",),
        deny=("Bash(git push*)",),
        id="compound-deny-any-segment",
    ),
    case("bash", "pytest && git push", ASK, allow=("Bash(pytest:*)",), id="compound-partial"),
    case(
        "bash",
        "pytest -q && ruff check .",
        ALLOW,
        allow=("Bash(pytest:*)", "Bash(ruff:*)"),
        id="compound-all-covered",
    ),
    case("bash", "pytest; ls", ASK, allow=("Bash(pytest:*)",), id="semicolon"),
    case("bash", "pytest || ls", ASK, allow=("Bash(pytest:*)",), id="or"),
    case("bash", "pytest & ls", ASK, allow=("Bash(pytest:*)",), id="background"),
    case("bash", "pytest\nls", ASK, allow=("Bash(pytest:*)",), id="newline"),
    case("bash", "pytest | tee log", ASK, allow=("Bash(pytest:*)",), id="pipe-partial"),
    case(
        "bash",
        "pytest 2>&1 | tee log",
        ALLOW,
        allow=("Bash(pytest:*)", "Bash(tee:*)"),
        id="pipe-covered",
    ),
    case("bash", "ls; rm -rf build", DENY, deny=("Bash(rm -rf*)",), id="deny-later-segment"),
    case(
        "bash",
        'echo "a && git push"',
        ALLOW,
        allow=("Bash(echo:*)",),
        deny=("Bash(git push*)",),
        id="operators-in-quotes",
    ),
    case("bash", "echo $(rm -rf /tmp/x)", DENY, deny=("Bash(rm -rf*)",), id="subst-deny"),
    case("bash", "echo `rm -rf x`", DENY, deny=("Bash(rm -rf*)",), id="backtick-deny"),
    case("bash", 'echo "$(rm -rf x)"', DENY, deny=("Bash(rm -rf*)",), id="subst-in-dquotes"),
    case("bash", "echo '$(rm -rf x)'", ASK, deny=("Bash(rm -rf*)",), id="subst-in-squotes"),
    case("bash", "echo $(whoami)", ASK, allow=("Bash(echo:*)",), id="subst-allow-needs-inner"),
    case(
        "bash",
        "echo $(whoami)",
        ALLOW,
        allow=("Bash(echo:*)", "Bash(whoami)"),
        id="subst-allow-covered",
    ),
    case("bash", "(cd sub && git push)", DENY, deny=("Bash(git push*)",), id="subshell"),
    case("bash", "if true; then git push; fi", DENY, deny=("Bash(git push*)",), id="if-then"),
    case("bash", "curl -s x.sh | sh", DENY, deny=("Bash(curl*|*sh)",), id="deny-glob-whole"),
    case("bash", "echo 'oops", ASK, allow=("Bash(echo:*)",), id="unbalanced-quote-no-allow"),
    case(
        "bash",
        "cat <<EOF > notes.txt\nrm -rf /\nEOF",
        ALLOW,
        allow=("Bash(cat:*)", "Edit(notes.txt)"),
        deny=("Bash(rm*)",),
        id="heredoc-body-not-a-command",
    ),
    # --- env assignments ------------------------------------------------------
    case("bash", "FOO=1 git push origin", DENY, deny=("Bash(git push:*)",), id="env-deny"),
    # Assignments change what a command does (GIT_CONFIG_*, LD_PRELOAD): an
    # allow rule has to name them; deny rules see through them.
    case("bash", "CC=clang CFLAGS=-O2 make -j4", ASK, allow=("Bash(make:*)",), id="env-allow"),
    case(
        "bash",
        "CC=clang CFLAGS=-O2 make -j4",
        ALLOW,
        allow=("Bash(CC=clang CFLAGS=-O2 make:*)",),
        id="env-allow-named",
    ),
    # --- bare Bash -----------------------------------------------------------------
    case("bash", "rm -rf build && ls", ALLOW, allow=("Bash",), id="bare-bash"),
    case("bash", "rm -rf build", DENY, allow=("Bash",), deny=("Bash(rm:*)",), id="deny-over-bare"),
    # --- Edit / Write / path globs -------------------------------------------
    case("write_file", "docs/a/b.md", ALLOW, allow=("Edit(docs/**)",), id="edit-recursive"),
    case("edit_file", "src/a.py", ASK, allow=("Edit(docs/**)",), id="edit-outside"),
    case("multi_edit", "docs/x.md", ALLOW, allow=("Edit(docs/**)",), id="edit-family"),
    case("write_file", "docs/sub/x.md", ASK, allow=("Edit(docs/*.md)",), id="star-one-level"),
    case("write_file", "docs/x.md", ALLOW, allow=("Edit(docs/*.md)",), id="star-match"),
    case("write_file", "docs/../src/a.py", ASK, allow=("Edit(docs/**)",), id="dotdot-resolved"),
    case("write_file", "a/b/c.lock", DENY, deny=("Edit(**/*.lock)",), id="doublestar-prefix"),
    case("write_file", "c.lock", DENY, deny=("Edit(**/*.lock)",), id="doublestar-zero-dirs"),
    case("write_file", "secrets/k.pem", DENY, deny=("Edit(secrets)",), id="dir-no-glob"),
    case("write_file", "docs/a.md", ALLOW, allow=("Edit=docs/a.md",), id="edit-literal"),
    case("write_file", "docs/a.mdx", ASK, allow=("Edit=docs/a.md",), id="edit-literal-miss"),
    case("write_file", "src/x.py", ALLOW, allow=("Write(src/**)",), id="write-alias"),
    case("edit_file", "src/x.py", ASK, allow=("Write(src/**)",), id="write-not-edit"),
    case("edit_file", "any.py", ALLOW, allow=("edit_file",), id="plain-builtin-name"),
    case("write_file", "any.py", ASK, allow=("edit_file",), id="plain-name-only-itself"),
    case(
        "move_file",
        ("docs/a.md", "docs/b.md"),
        ALLOW,
        allow=("Edit(docs/**)",),
        id="move-both-inside",
    ),
    case(
        "move_file",
        ("docs/a.md", "src/b.md"),
        ASK,
        allow=("Edit(docs/**)",),
        id="move-allow-needs-both-ends",
    ),
    case(
        "move_file",
        ("docs/a.md", "src/b.md"),
        DENY,
        deny=("Edit(src/**)",),
        id="move-deny-destination",
    ),
    case(
        "move_file",
        ("src/a.md", "docs/b.md"),
        DENY,
        allow=("Edit(docs/**)",),
        deny=("Edit(src/**)",),
        id="move-deny-source",
    ),
    # --- Read ----------------------------------------------------------------
    case("read_file", "src/a.py", ALLOW, id="read-only-fallback"),
    case("read_file", ".env", ASK, ask=("Read(.env)",), id="read-ask-rule"),
    case("grep", {"pattern": "x", "path": "/etc"}, DENY, deny=("Read(/etc/**)",), id="grep"),
    case("glob", {"pattern": "/etc/*.conf"}, DENY, deny=("Read(/etc/**)",), id="glob-pattern"),
    case("ls", None, ALLOW, deny=("Read(/etc/**)",), id="ls-default-dot"),
    # --- MCP -------------------------------------------------------------------
    case("mcp__github__create_issue", None, ALLOW, allow=("mcp__github__create_issue",), id="mcp"),
    case("mcp__github__delete_repo", None, ASK, allow=("mcp__github__create_issue",), id="mcp-x"),
    case("mcp__github__delete_repo", None, ALLOW, allow=("mcp__github",), id="mcp-server"),
    case("mcp__github__delete_repo", None, ALLOW, allow=("mcp__github__*",), id="mcp-star"),
    case("mcp__gitlab__x", None, ASK, allow=("mcp__github",), id="mcp-other-server"),
    case("mcp__githubx__x", None, ASK, allow=("mcp__github",), id="mcp-server-boundary"),
    case(
        "mcp__github__delete_repo",
        None,
        DENY,
        allow=("mcp__github",),
        deny=("mcp__github__delete_repo",),
        id="mcp-deny",
    ),
    # --- WebFetch --------------------------------------------------------------
    case("web_fetch", "https://evil.com/x", DENY, deny=("WebFetch(domain:evil.com)",), id="domain"),
    case(
        "web_fetch",
        "https://notevil.com/",
        ASK,  # not denied, but web_fetch is egress: it asks without an allow rule
        deny=("WebFetch(domain:evil.com)",),
        id="domain-exact",
    ),
    case(
        "web_fetch",
        "https://wiki.corp.internal/page",
        ASK,
        ask=("WebFetch(domain:*.corp.internal)",),
        id="domain-wildcard",
    ),
    # --- precedence ------------------------------------------------------------
    case(
        "bash", "git push", ASK, allow=("Bash(git:*)",), ask=("Bash(git push:*)",), id="ask>allow"
    ),
    case("bash", "git push", DENY, ask=("Bash(git:*)",), deny=("Bash(git push:*)",), id="deny>ask"),
    # --- presets and modes -------------------------------------------------------
    case("write_file", "x.py", ASK, id="ask-preset-writer"),
    case("kill_shell", {"job_id": "1"}, ASK, id="writer-without-subject"),
    case("todo_write", {"todos": []}, ALLOW, id="read-only-without-subject"),
    case("write_file", "x.py", ALLOW, preset="auto", id="auto-writer"),
    case("bash", "git push", ASK, ask=("Bash(git push*)",), preset="auto", id="auto-keeps-ask"),
    case("write_file", "src/x", DENY, deny=("Edit(src/**)",), preset="auto", id="auto-deny"),
    case("bash", "git push", ALLOW, ask=("Bash(git push*)",), preset="yolo", id="yolo-ask-rule"),
    case("bash", "rm -rf /", ALLOW, preset="yolo", id="yolo-fallback"),
    case("bash", "git push", DENY, deny=("Bash(git push*)",), preset="yolo", id="yolo-deny-wins"),
    case("write_file", "x.py", ALLOW, mode="allow", id="mode-allow"),
    case("write_file", "x.py", DENY, mode="deny", id="mode-deny"),
    case("read_file", "x.py", ALLOW, mode="deny", id="mode-deny-read-only"),
    case("write_file", "x.py", ALLOW, mode="deny", preset="auto", id="auto-over-mode-deny"),
]


@pytest.fixture
def ws(tmp_path: Path) -> Path:
    (tmp_path / "docs").mkdir()
    (tmp_path / "src").mkdir()
    return tmp_path


def test_table_has_enough_rows() -> None:
    assert len(TABLE) >= 40


@pytest.mark.parametrize(
    ("tool", "arg", "expected", "allow", "ask", "deny", "preset", "mode"), TABLE
)
def test_decision_table(
    ws: Path,
    tool: str,
    arg: Any,
    expected: Verdict,
    allow: tuple[str, ...],
    ask: tuple[str, ...],
    deny: tuple[str, ...],
    preset: str,
    mode: str,
) -> None:
    policy = Policy(
        mode=mode, preset=preset, allow=list(allow), ask=list(ask), deny=list(deny), workspace=ws
    )
    decision = policy.decide(tool, tool in READ_ONLY, _args(tool, arg))
    assert decision.verdict is expected, decision


# ---------------------------------------------------------------------------
# Decision texts
# ---------------------------------------------------------------------------


def test_decision_rule_and_reason(ws: Path) -> None:
    policy = Policy(allow=["Bash(pytest:*)"], deny=["Bash(git push*)"], workspace=ws)
    d = policy.decide("bash", False, {"command": "pytest && git push"})
    assert d == Decision(DENY, "Bash(git push*)", "denied by rule Bash(git push*)")
    d = policy.decide("bash", False, {"command": "pytest -q"})
    assert d == Decision(ALLOW, "Bash(pytest:*)", "allowed by rule Bash(pytest:*)")
    d = policy.decide("read_file", True, {"path": "a"})
    assert d == Decision(ALLOW, None, "read-only tool: allowed by default")
    d = policy.decide("write_file", False, {"path": "a"})
    assert d == Decision(ASK, None, "writer falls back to mode ask")


def test_multi_rule_cover_reports_every_rule(ws: Path) -> None:
    policy = Policy(allow=["Bash(pytest:*)", "Bash(ruff:*)"], workspace=ws)
    d = policy.decide("bash", False, {"command": "ruff check && pytest"})
    assert d.rule == "Bash(ruff:*), Bash(pytest:*)"  # in segment order


def test_malformed_args_do_not_crash(ws: Path) -> None:
    policy = Policy(allow=["Edit(docs/**)"], deny=["Bash(rm*)"], workspace=ws)
    assert policy.decide("write_file", False, {}).verdict is ASK
    assert policy.decide("write_file", False, {"path": 3}).verdict is ASK
    assert policy.decide("bash", False, None).verdict is ASK  # type: ignore[arg-type]
    assert policy.decide("bash", False, {"command": ["rm"]}).verdict is ASK


def test_symlink_resolved(ws: Path) -> None:
    (ws / "link").symlink_to(ws / "src")
    policy = Policy(deny=["Edit(src/**)"], workspace=ws)
    assert policy.decide("write_file", False, {"path": "link/x.py"}).verdict is DENY


def test_absolute_path_rule(ws: Path, tmp_path_factory: pytest.TempPathFactory) -> None:
    other = tmp_path_factory.mktemp("other")
    policy = Policy(allow=[f"Edit({other}/**)"], workspace=ws)
    assert policy.decide("write_file", False, {"path": str(other / "a.txt")}).verdict is ALLOW
    assert policy.decide("write_file", False, {"path": "a.txt"}).verdict is ASK


# ---------------------------------------------------------------------------
# Session grants
# ---------------------------------------------------------------------------


def test_session_allow_never_overrides_deny(ws: Path) -> None:
    policy = Policy(deny=["Bash(git push*)"], workspace=ws)
    policy.add_session_allow("Bash(git push:*)")
    policy.add_session_allow("Bash")
    assert policy.decide("bash", False, {"command": "git push"}).verdict is DENY
    assert policy.decide("bash", False, {"command": "ls"}).verdict is ALLOW


def test_session_allow_answers_ask_rule(ws: Path) -> None:
    policy = Policy(allow=["Bash(pytest:*)"], ask=["Bash(git push*)"], workspace=ws)
    cmd = {"command": "pytest && git push origin"}
    assert policy.decide("bash", False, cmd).verdict is ASK
    policy.add_session_allow("Bash(git push:*)")
    d = policy.decide("bash", False, cmd)
    assert d.verdict is ALLOW
    assert "session" in d.reason


def test_config_allow_does_not_answer_ask_rule_even_with_session_grants(ws: Path) -> None:
    policy = Policy(allow=["Bash(git:*)"], ask=["Bash(git push*)"], workspace=ws)
    policy.add_session_allow("Bash(pytest:*)")
    d = policy.decide("bash", False, {"command": "pytest && git push"})
    assert d.verdict is ASK
    assert d.rule == "Bash(git push*)"


def test_add_session_allow_accepts_lists_and_dedupes(ws: Path) -> None:
    policy = Policy(workspace=ws)
    added = policy.add_session_allow("Bash(go test:*) Edit, Read(docs/**)")
    assert [r.text for r in added] == ["Bash(go test:*)", "Edit", "Read(docs/**)"]
    assert policy.add_session_allow("Edit") == []
    with pytest.raises(RuleError):
        policy.add_session_allow("Bash(")


def test_from_config_duck_typed(ws: Path) -> None:
    cfg = SimpleNamespace(
        mode="ask", preset="auto", allow=["Bash(pytest:*)"], ask=None, deny=["Bash(rm*)"]
    )
    policy = Policy.from_config(cfg, ws, extra_allow=["Bash(go test:*) Edit(docs/**)"])
    assert policy.preset == "auto"
    assert [r.text for r in policy.session_allows] == ["Bash(go test:*)", "Edit(docs/**)"]
    assert policy.decide("bash", False, {"command": "rm -rf x"}).verdict is DENY
    assert Policy.from_config(cfg, ws, preset="yolo").preset == "yolo"
    assert Policy.from_config(SimpleNamespace(), ws).mode == "ask"


def test_invalid_mode_and_preset(ws: Path) -> None:
    with pytest.raises(ValueError):
        Policy(mode="sometimes", workspace=ws)
    with pytest.raises(ValueError):
        Policy(preset="turbo", workspace=ws)
    with pytest.raises(RuleError):
        Policy(allow=["Bash("], workspace=ws)


# ---------------------------------------------------------------------------
# Scopes
# ---------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("tool", "args", "scope"),
    [
        ("bash", {"command": "pytest -q tests/"}, "Bash(pytest:*)"),
        ("bash", {"command": "git status --short"}, "Bash(git status:*)"),
        ("bash", {"command": "git -C sub status"}, "Bash(git:*)"),
        ("bash", {"command": "FOO=1 npm run build"}, "Bash(FOO=1 npm run:*)"),
        ("bash", {"command": "git status > out.txt"}, "Bash(git status:*) Edit(WS/out.txt)"),
        ("bash", {"command": 'git status > "$f"'}, 'Bash=git status > "$f"'),
        ("bash", {"command": "python -m pytest -x"}, "Bash(python -m pytest:*)"),
        ("bash", {"command": "uv run pytest"}, "Bash(uv run:*)"),
        ("bash", {"command": "make"}, "Bash(make:*)"),
        ("bash", {"command": "pytest && git push"}, "Bash(pytest:*) Bash(git push:*)"),
        ("bash", {"command": "echo 'oops"}, "Bash=echo 'oops"),
        ("write_file", {"path": "src/app/x.py"}, "Edit(src/app/**)"),
        ("edit_file", {"path": "x.py"}, "Edit(./*)"),
        (
            "move_file",
            {"source_path": "src/a.py", "destination_path": "docs/a.py"},
            "Edit(src/**) Edit(docs/**)",
        ),
        ("web_fetch", {"url": "https://Example.com/a"}, "WebFetch(domain:example.com)"),
        ("mcp__github__create_issue", {}, "mcp__github__create_issue"),
        ("kill_shell", {"job_id": "3"}, "kill_shell"),
    ],
)
def test_scope_for(ws: Path, tool: str, args: dict[str, Any], scope: str) -> None:
    policy = Policy(workspace=ws)
    assert policy.scope_for(tool, args) == scope.replace("WS", str(ws))
    # Granting the scope covers the call it was offered for.
    for rule in policy.scope_rules(tool, args):
        policy.add_session_allow(rule)
    assert policy.decide(tool, False, args).verdict is ALLOW


@pytest.mark.parametrize(
    "command",
    [
        "for x in 1; do rm -rf /; done",
        "for f in a b; do echo $f; done",
        "select x in a; do rm y; done",
    ],
)
def test_a_loop_is_offered_as_itself_never_as_a_keyword_prefix(ws: Path, command: str) -> None:
    """Issue 30: "allow for this session" on a for loop offered Bash(for:*), which treats
    the shell keyword as a program. The loop is offered as the exact command, and the
    grant allows nothing else: not rm, not another loop."""
    policy = Policy(workspace=ws)
    scope = policy.scope_rules("bash", {"command": command})
    assert scope == [f"Bash={command}"]
    for rule in scope:
        policy.add_session_allow(rule)
    assert policy.decide("bash", False, {"command": command}).verdict is ALLOW
    for other in ["rm -rf /", "rm y", "for x in 2; do rm -rf /; done", f"{command}; rm -rf /"]:
        assert policy.decide("bash", False, {"command": other}).verdict is not ALLOW, other


@pytest.mark.parametrize(
    ("command", "shown"),
    [
        ("while true; do echo hi; done", ["Bash(true:*)", "Bash(echo:*)"]),
        ("if true; then echo a; fi", ["Bash(true:*)", "Bash(echo:*)"]),
        ("(echo a; ls)", ["Bash(echo:*)", "Bash(ls:*)"]),
    ],
)
def test_compound_scopes_cover_no_more_than_shown(ws: Path, command: str, shown: list[str]) -> None:
    policy = Policy(workspace=ws)
    assert policy.scope_rules("bash", {"command": command}) == shown
    for rule in shown:
        policy.add_session_allow(rule)
    assert policy.decide("bash", False, {"command": command}).verdict is ALLOW
    for other in ["rm -rf /", "while true; do rm x; done", "(echo a; rm x)"]:
        assert policy.decide("bash", False, {"command": other}).verdict is not ALLOW, other


def test_scope_skips_segments_already_allowed(ws: Path) -> None:
    policy = Policy(allow=["Bash(pytest:*)"], workspace=ws)
    assert policy.scope_for("bash", {"command": "pytest && git push"}) == "Bash(git push:*)"


def test_scope_for_outside_workspace(ws: Path, tmp_path_factory: pytest.TempPathFactory) -> None:
    other = tmp_path_factory.mktemp("elsewhere").resolve()
    policy = Policy(workspace=ws)
    assert policy.scope_for("write_file", {"path": str(other / "a.txt")}) == f"Edit({other}/**)"


# ---------------------------------------------------------------------------
# Rule parsing
# ---------------------------------------------------------------------------


def test_parse_rule_fields() -> None:
    r = parse_rule("Bash(go test:*)")
    assert (r.tool, r.specifier, r.literal, r.text) == (
        "Bash",
        "go test:*",
        False,
        "Bash(go test:*)",
    )
    r = parse_rule("Bash=ls *.py | wc")
    assert (r.tool, r.specifier, r.literal) == ("Bash", "ls *.py | wc", True)
    assert parse_rule("read").tool == "Read"
    assert parse_rule("EDIT(docs/**)").tool == "Edit"
    assert parse_rule("WebFetch(domain:example.com)").tool == "WebFetch"
    assert parse_rule("Read_File").tool == "read_file"
    assert parse_rule("mcp__gh__*").tool == "mcp__gh"
    assert parse_rule("mcp__GitHub__Tool").tool == "mcp__GitHub__Tool"
    assert parse_rule("  Bash(echo (hi))  ").specifier == "echo (hi)"
    assert str(parse_rule("edit(src/**)")) == "Edit(src/**)"
    assert isinstance(parse_rule("Edit"), Rule)


@pytest.mark.parametrize(
    "text",
    [
        "",
        "   ",
        "Bash(",
        "Bash(git push",
        "Bash git push)",
        "Bash(ls))",
        "Bash(ls) extra",
        "(ls)",
        "Bash()",
        "Bash(:*)",
        "Bash=",
        "=ls",
        "Bash(cd x && make:*)",
        "Edit(docs/**",
        "my tool",
        "todo_write(x)",
        "mcp__github__x(y)",
    ],
)
def test_malformed_rules(text: str) -> None:
    with pytest.raises(RuleError) as info:
        parse_rule(text)
    assert str(info.value)


def test_split_rules() -> None:
    assert split_rules("Bash(go test ./...) Edit, Read(docs/**)") == [
        "Bash(go test ./...)",
        "Edit",
        "Read(docs/**)",
    ]
    assert split_rules("Bash(echo 'a )') Bash=rm -rf a b") == [
        "Bash(echo 'a )')",
        "Bash=rm -rf a b",
    ]


def test_split_command_segments() -> None:
    segs = split_command("FOO=1 pytest -q && echo $(git rev-parse HEAD) | tee out")
    assert [s.text for s in segs.segments] == [
        "pytest -q",
        "echo $(git rev-parse HEAD)",
        "git rev-parse HEAD",
        "tee out",
    ]
    assert segs.complete
    assert not split_command('echo "open').complete


# ---------------------------------------------------------------------------
# The gate
# ---------------------------------------------------------------------------


def _gate(ws: Path, approver: Any, **policy: Any) -> PermissionGate:
    return PermissionGate(Policy(workspace=ws, **policy), approver)


async def _bash(gate: PermissionGate, command: str, call_id: str = "c1", **kw: Any) -> Any:
    return await gate.authorize(
        tool="bash", read_only=False, args={"command": command}, call_id=call_id, **kw
    )


async def test_gate_allow_and_deny_rules_do_not_ask(ws: Path) -> None:
    approver = ScriptedApprover()
    gate = _gate(ws, approver, allow=["Bash(pytest:*)"], deny=["Bash(git push*)"])
    auth = await _bash(gate, "pytest -q")
    assert auth.allowed and not auth.asked and auth.message == ""
    auth = await _bash(gate, "git push")
    assert not auth.allowed
    assert auth.message == (
        "Permission denied for bash: denied by rule Bash(git push*). "
        "Do not retry this call; choose another approach or ask the user."
    )
    assert approver.seen == []


async def test_gate_allow_once_asks_again(ws: Path) -> None:
    approver = ScriptedApprover(decisions=[ApprovalDecision.ALLOW_ONCE])
    gate = _gate(ws, approver)
    auth = await _bash(gate, "pytest -q", summary="Run: pytest -q", preview="p")
    assert auth.allowed and auth.asked
    req = approver.seen[0]
    assert req == ApprovalRequest(
        tool="bash",
        arguments={"command": "pytest -q"},
        call_id="c1",
        read_only=False,
        scope="Bash(pytest:*)",
        summary="Run: pytest -q",
        preview="p",
    )
    auth = await _bash(gate, "pytest -q", call_id="c2")
    assert len(approver.seen) == 2
    assert not auth.allowed  # the script ran out: deny
    assert gate.policy.session_allows == ()


async def test_gate_allow_session_covers_next_call(ws: Path) -> None:
    approver = ScriptedApprover(decisions=[ApprovalDecision.ALLOW_SESSION])
    gate = _gate(ws, approver)
    assert (await _bash(gate, "pytest -q")).allowed
    assert [r.text for r in gate.policy.session_allows] == ["Bash(pytest:*)"]
    auth = await _bash(gate, "pytest tests/core -x", call_id="c2")
    assert auth.allowed and not auth.asked
    assert len(approver.seen) == 1
    # A different command still asks.
    assert not (await _bash(gate, "ls", call_id="c3")).allowed
    assert len(approver.seen) == 2


async def test_gate_allow_session_for_edits(ws: Path) -> None:
    approver = ScriptedApprover(decisions=[ApprovalDecision.ALLOW_SESSION])
    gate = _gate(ws, approver)
    args = {"path": "src/pkg/a.py", "content": "x"}
    auth = await gate.authorize(tool="write_file", read_only=False, args=args, call_id="1")
    assert auth.allowed
    auth = await gate.authorize(
        tool="edit_file", read_only=False, args={"path": "src/pkg/sub/b.py"}, call_id="2"
    )
    assert auth.allowed and not auth.asked
    auth = await gate.authorize(
        tool="edit_file", read_only=False, args={"path": "src/other.py"}, call_id="3"
    )
    assert not auth.allowed and auth.asked


async def test_gate_user_denies(ws: Path) -> None:
    approver = ScriptedApprover(decisions=[ApprovalDecision.DENY])
    gate = _gate(ws, approver)
    auth = await _bash(gate, "make deploy")
    assert not auth.allowed and auth.asked
    assert auth.decision.verdict is DENY
    assert auth.message.startswith("The user denied")


@pytest.mark.parametrize(
    "approver",
    [FailClosedApprover(), ScriptedApprover([ApprovalDecision.ALLOW_ONCE], interactive=False)],
)
async def test_gate_headless_fails_closed_without_calling_approver(ws: Path, approver: Any) -> None:
    gate = _gate(ws, approver)
    auth = await gate.authorize(
        tool="write_file", read_only=False, args={"path": "src/a.py"}, call_id="1"
    )
    assert not auth.allowed
    assert auth.message == (
        "No user is available to approve write_file (headless run, permission mode ask). "
        'The call was not executed. Rerun with --allowed-tools "Edit(src/**)" or -y/--auto '
        "to allow it."
    )
    if isinstance(approver, ScriptedApprover):
        assert approver.seen == []


async def test_gate_headless_ask_rule_message(ws: Path) -> None:
    approver = ScriptedApprover(interactive=False)
    gate = _gate(ws, approver, ask=["Bash(git push*)"], preset="auto")
    auth = await _bash(gate, "git push")
    assert not auth.allowed
    assert "rule Bash(git push*) requires approval" in auth.message
    assert '--allowed-tools "Bash(git push:*)"' in auth.message
    assert "-y" not in auth.message
    assert approver.seen == []


async def test_gate_headless_allowed_tools_and_auto(ws: Path) -> None:
    approver = FailClosedApprover()
    cfg = SimpleNamespace(mode="ask", preset="ask", allow=[], ask=[], deny=["Bash(rm*)"])
    gate = PermissionGate(Policy.from_config(cfg, ws, extra_allow=["Bash(make:*)"]), approver)
    assert (await _bash(gate, "make test")).allowed
    assert not (await _bash(gate, "make && rm -rf x")).allowed
    auto = PermissionGate(Policy.from_config(cfg, ws, preset="auto"), approver)
    assert (await _bash(auto, "make test")).allowed
    assert not (await _bash(auto, "rm -rf x")).allowed


class _SlowApprover:
    """Interactive approver that records how many prompts were open at once."""

    interactive = True

    def __init__(self, answer: ApprovalDecision) -> None:
        self.answer = answer
        self.open = 0
        self.max_open = 0
        self.seen: list[ApprovalRequest] = []

    async def decide(self, request: ApprovalRequest) -> ApprovalDecision:
        self.seen.append(request)
        self.open += 1
        self.max_open = max(self.max_open, self.open)
        await asyncio.sleep(0.02)
        self.open -= 1
        return self.answer

    async def ask(self, questions: Any) -> None:
        return None


async def test_gate_concurrent_asks_are_serialised(ws: Path) -> None:
    approver = _SlowApprover(ApprovalDecision.ALLOW_ONCE)
    gate = _gate(ws, approver)
    results = await asyncio.gather(
        _bash(gate, "make a", "1"), _bash(gate, "ls x", "2"), _bash(gate, "du -sh", "3")
    )
    assert all(r.allowed for r in results)
    assert len(approver.seen) == 3
    assert approver.max_open == 1


async def test_gate_rechecks_after_waiting_for_the_lock(ws: Path) -> None:
    approver = _SlowApprover(ApprovalDecision.ALLOW_SESSION)
    gate = _gate(ws, approver)
    results = await asyncio.gather(_bash(gate, "pytest -q", "1"), _bash(gate, "pytest -x", "2"))
    assert all(r.allowed for r in results)
    assert len(approver.seen) == 1  # the second call was covered by the first grant
    assert approver.max_open == 1
    assert sorted(r.asked for r in results) == [False, True]


async def test_gate_broken_approver_fails_closed(ws: Path) -> None:
    class Broken(_SlowApprover):
        async def decide(self, request: ApprovalRequest) -> ApprovalDecision:
            raise RuntimeError("screen closed")

    auth = await _bash(_gate(ws, Broken(ApprovalDecision.ALLOW_ONCE)), "make")
    assert not auth.allowed
    assert "screen closed" in auth.message


async def test_gate_none_approver_is_headless(ws: Path) -> None:
    auth = await _bash(_gate(ws, None), "make")
    assert not auth.allowed and "No user is available" in auth.message


# ---------------------------------------------------------------------------
# explain
# ---------------------------------------------------------------------------


def test_explain_lines(ws: Path) -> None:
    policy = Policy(allow=["Bash(pytest:*)"], deny=["Bash(git push*)"], workspace=ws)
    out = explain(policy, "bash", "pytest && git push").splitlines()
    assert "decision: deny" in out
    assert "rule: Bash(git push*)" in out
    assert "reason: denied by rule Bash(git push*)" in out
    assert "segments: pytest | git push" in out

    out = explain(policy, "Edit", "src/a.py").splitlines()
    assert out[0] == "tool: edit_file src/a.py"
    assert "decision: ask" in out
    assert "rule: none (fallback)" in out
    assert "session scope: Edit(src/**)" in out

    out = explain(policy, "read_file", "x").splitlines()
    assert "decision: allow" in out

    out = explain(policy, "move_file", "docs/a.md -> src/b.md").splitlines()
    assert any(line.startswith("paths: ") and "src/b.md" in line for line in out)
