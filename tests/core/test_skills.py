"""Skills: discovery from the four roots, precedence, front matter as Claude Code
writes it, hostile folders, the frozen index and ``/<skill>`` expansion."""

from __future__ import annotations

import os
import threading
from pathlib import Path

import pytest

from reasonix_core.command.frontmatter import FrontMatterError, split_front_matter
from reasonix_core.errors import SkillError
from reasonix_core.skills import Skill, SkillCatalog, expand_skill_command, load_catalog
from reasonix_core.skills.discovery import MAX_SKILL_BYTES
from reasonix_core.skills.index import HEADING, MAX_INDEX_CHARS


def write_skill(root: Path, folder: str, text: str) -> Path:
    path = root / folder / "SKILL.md"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")
    return path


def skill_md(name: str, description: str, body: str = "Do the thing.", **extra: str) -> str:
    lines = ["---", f"name: {name}", f"description: {description}"]
    lines += [f"{key}: {value}" for key, value in extra.items()]
    return "\n".join([*lines, "---", "", body, ""])


@pytest.fixture
def roots(tmp_path: Path) -> dict[str, Path]:
    """The four roots of a workspace, a Reasonix home and a user home."""
    workspace, home, user = tmp_path / "ws", tmp_path / "rx-home", tmp_path / "user"
    for folder in (workspace, home, user):
        folder.mkdir(exist_ok=True)
    return {
        "workspace": workspace,
        "home": home,
        "user": user,
        "user_reasonix": home / "skills",
        "user_claude": user / ".claude" / "skills",
        "project_reasonix": workspace / ".reasonix" / "skills",
        "project_claude": workspace / ".claude" / "skills",
    }


def catalog(roots: dict[str, Path]) -> SkillCatalog:
    return load_catalog(roots["workspace"], roots["home"], roots["user"])


def messages(found: SkillCatalog) -> list[str]:
    return [f"{p.path}: {p.message}" for p in found.problems]


# -- discovery and precedence -------------------------------------------------


def test_all_four_roots_are_read_and_the_user_wins_a_clash(roots):
    write_skill(roots["user_reasonix"], "a", skill_md("a", "from user reasonix"))
    write_skill(roots["user_claude"], "b", skill_md("b", "from user claude"))
    write_skill(roots["project_reasonix"], "c", skill_md("c", "from project reasonix"))
    write_skill(roots["project_claude"], "d", skill_md("d", "from project claude"))
    # The same name in every root: the first root in precedence order wins.
    for key in ("user_reasonix", "user_claude", "project_reasonix", "project_claude"):
        write_skill(roots[key], "shared", skill_md("shared", f"shared from {key}"))
    found = catalog(roots)
    assert [s.name for s in found.skills] == ["a", "b", "c", "d", "shared"]
    assert found.get("shared").description == "shared from user_reasonix"
    assert found.get("d").description == "from project claude"
    # One notice per hidden copy, naming the hidden file and the winner.
    clashes = [m for m in messages(found) if "is hidden by" in m]
    assert len(clashes) == 3
    winner = str(roots["user_reasonix"] / "shared" / "SKILL.md")
    for key in ("user_claude", "project_reasonix", "project_claude"):
        hidden = str(roots[key].resolve() / "shared" / "SKILL.md")
        assert any(m.startswith(hidden) and winner in m for m in clashes), (key, clashes)


def test_within_a_scope_reasonix_wins_over_claude(roots):
    write_skill(roots["project_reasonix"], "x", skill_md("x", "reasonix"))
    write_skill(roots["project_claude"], "x", skill_md("x", "claude"))
    found = catalog(roots)
    assert found.get("x").description == "reasonix"
    assert any(".claude/skills" in m and "is hidden by" in m for m in messages(found))


def test_a_workspace_that_is_the_home_reads_its_folders_once(roots):
    # With the workspace at $HOME, .claude/skills is ~/.claude/skills: no clash with itself.
    write_skill(roots["user_claude"], "x", skill_md("x", "once"))
    found = load_catalog(roots["user"], roots["home"], roots["user"])
    assert [s.name for s in found.skills] == ["x"]
    assert found.problems == ()


def test_a_subfolder_of_a_repository_sees_the_skills_up_to_its_git_root(tmp_path):
    repo = tmp_path / "repo"
    (repo / ".git").mkdir(parents=True)
    cwd = repo / "src" / "pkg"
    cwd.mkdir(parents=True)
    write_skill(repo / ".claude" / "skills", "root-claude", skill_md("root-claude", "at the root"))
    write_skill(repo / ".reasonix" / "skills", "shared", skill_md("shared", "root copy"))
    write_skill(repo / "src" / ".claude" / "skills", "mid", skill_md("mid", "in src"))
    write_skill(cwd / ".reasonix" / "skills", "shared", skill_md("shared", "deeper copy"))
    write_skill(cwd / ".claude" / "skills", "here", skill_md("here", "in the cwd"))
    # Above the git root is not the project.
    write_skill(tmp_path / ".reasonix" / "skills", "above", skill_md("above", "outside"))
    # An ancestor's skills folder that links out of the repository is not read.
    (tmp_path / "elsewhere").mkdir()
    write_skill(tmp_path / "elsewhere", "stolen", skill_md("stolen", "outside"))
    (repo / "src" / ".reasonix").mkdir()
    (repo / "src" / ".reasonix" / "skills").symlink_to(tmp_path / "elsewhere")
    found = load_catalog(cwd, tmp_path / "rx-home", tmp_path / "user")
    assert [s.name for s in found.skills] == ["here", "mid", "root-claude", "shared"]
    assert found.get("shared").description == "deeper copy"  # the deeper folder wins
    text = "\n".join(messages(found))
    assert "is hidden by" in text and "(.reasonix/skills comes first)" in text
    assert "src/.reasonix/skills: links out of the project" in text


def test_missing_roots_are_fine(tmp_path):
    found = load_catalog(tmp_path / "nope", tmp_path / "nope2", tmp_path / "nope3")
    assert not found and found.problems == () and found.index.text == ""


def test_the_skill_value(roots):
    path = write_skill(
        roots["project_reasonix"],
        "reviewer",
        "---\nname: reviewer\ndescription: Review a diff\nrunAs: subagent\nmodel: deepseek-flash\n"
        "effort: high\nread-only: true\nallowed-tools: read_file, grep\n---\n\nReview $ARGUMENTS.\n",
    )
    skill = catalog(roots).get("reviewer")
    assert skill == Skill(
        name="reviewer",
        description="Review a diff",
        body="Review $ARGUMENTS.",
        path=path.resolve(),
        run_as="subagent",
        model="deepseek-flash",
        effort="high",
        read_only=True,
        allowed_tools=("read_file", "grep"),
    )


# -- front matter as Claude Code writes it -----------------------------------


def test_claude_code_examples(roots):
    # Examples in the shapes Claude Code's skills documentation uses.
    write_skill(
        roots["project_claude"],
        "explain-code",
        "---\nname: explain-code\ndescription: Explains code with visual diagrams and analogies. "
        'Use when explaining how code works, teaching about a codebase, or when the user asks "how '
        'does this work?"\n---\n\nWhen explaining code, always include:\n\n1. **Start with an '
        "analogy**\n",
    )
    write_skill(
        roots["project_claude"],
        "safe-reader",
        "---\nname: safe-reader\ndescription: Read files without making changes\n"
        "allowed-tools: Read, Grep, Glob\n---\n\nRead only.\n",
    )
    write_skill(
        roots["project_claude"],
        "code-review",
        "---\nname: code-review\nversion: 1.0.0\ndescription: Reviews code for bugs, security, and "
        "best practices. Use when reviewing PRs, auditing code, or before merging.\n"
        "allowed-tools: Read Grep Glob Bash(git diff *)\nargument-hint: [file or directory]\n"
        "model: sonnet\n---\n\nReview it.\n",
    )
    write_skill(
        roots["project_claude"],
        "fix-issue",
        "---\nname: fix-issue\ndescription: Fix a GitHub issue\ndisable-model-invocation: true\n"
        "---\n\nFix GitHub issue $ARGUMENTS following our coding standards.\n",
    )
    write_skill(
        roots["project_claude"],
        "deep-research",
        "---\nname: deep-research\ndescription: Research a topic thoroughly\ncontext: fork\n"
        "agent: Explore\n---\n\nResearch $ARGUMENTS thoroughly:\n",
    )
    write_skill(
        roots["project_claude"],
        "listed",
        "---\nname: listed\ndescription: >\n  Folded over\n  two lines.\nallowed-tools:\n"
        '  - Read\n  - Bash(npm run *)\nmetadata:\n  version: "1.0.0"\n  related-skills:\n'
        "    - other\n---\n\nBody.\n",
    )
    found = catalog(roots)
    assert messages(found) == []
    by = {s.name: s for s in found.skills}
    assert by["explain-code"].description.endswith('asks "how does this work?"')
    assert by["safe-reader"].allowed_tools == ("Read", "Grep", "Glob")
    assert by["code-review"].allowed_tools == ("Read", "Grep", "Glob", "Bash(git diff *)")
    assert by["code-review"].model == "sonnet"
    assert by["explain-code"].allowed_tools is None and by["explain-code"].run_as == "inline"
    assert by["deep-research"].run_as == "subagent"  # Claude Code's `context: fork`
    assert by["listed"].description == "Folded over two lines."
    assert by["listed"].allowed_tools == ("Read", "Bash(npm run *)")
    commands = {name: hint for name, _, hint in found.commands()}
    assert commands["code-review"] == "[file or directory]"
    # disable-model-invocation: the user's /fix-issue, never in the model's index.
    assert "fix-issue" in commands
    assert "- fix-issue" not in found.index.text and "- explain-code:" in found.index.text
    with pytest.raises(SkillError, match="started only by the user"):
        found.load("fix-issue", by="model")
    assert found.load("fix-issue", by="user").body.startswith("Fix GitHub issue")


def test_name_defaults_to_the_folder_and_a_missing_description_warns(roots):
    path = write_skill(roots["project_reasonix"], "notes", "# Notes\n\nKeep notes tidy.\n\nMore.\n")
    found = catalog(roots)
    skill = found.get("notes")
    assert skill is not None and skill.description == "Keep notes tidy."
    [warning] = messages(found)
    assert warning.startswith(str(path.resolve())) and "line 1: no description" in warning


def test_front_matter_parser_variants():
    meta, body = split_front_matter(
        "\ufeff---\nName: x\nrunAs: subagent\ndesc: 'quoted # kept'\nplain: v # comment\n"
        "flow: [a, 'b c']\nempty: []\nlit: |\n  one\n  two\n---\nbody\n"
    )
    assert body == "body\n"
    assert meta.text("name") == "x" and meta.text("runas") == "subagent"
    assert meta.text("desc") == "quoted # kept" and meta.text("plain") == "v"
    assert meta.entries["flow"].value == ("a", "b c") and meta.entries["empty"].value == ()
    assert meta.text("lit") == "one\ntwo"
    assert meta.line("runas") == 3 and meta.body_line == 12
    with pytest.raises(FrontMatterError) as bad:
        split_front_matter("---\nname: x\nthis is no pair\n---\nbody")
    assert bad.value.line == 3
    with pytest.raises(FrontMatterError, match="not closed"):
        split_front_matter("---\nname: x\n")


# -- hostile and broken files --------------------------------------------------


def test_broken_files_are_reported_with_file_and_line_and_the_rest_load(roots):
    root = roots["project_reasonix"]
    write_skill(root, "good", skill_md("good", "fine"))
    bad = {
        "bad-name": (skill_md("Bad Name!", "x"), "line 2: invalid skill name"),
        "bad-runas": (skill_md("bad-runas", "x", runAs="sometimes"), "line 4: runAs must be"),
        "bad-flag": (skill_md("bad-flag", "x", **{"read-only": "maybe"}), "line 4: read-only"),
        "unclosed": ("---\nname: unclosed\ndescription: x\n", "line 1: front matter is not"),
        "no-pair": ("---\nname: no-pair\njunk line\n---\nbody\n", "line 3: front matter line"),
        "empty": (skill_md("empty", "x", body=""), "empty body"),
        "long-name": (skill_md("a" * 65, "x"), "invalid skill name"),
        # A folder name ending in a newline is not a name ('$' would have let it pass).
        "newline\n": ("---\ndescription: x\n---\nbody\n", "invalid skill name"),
    }
    for folder, (text, _) in bad.items():
        write_skill(root, folder, text)
    (root / "binary").mkdir()
    (root / "binary" / "SKILL.md").write_bytes(b"\x89PNG\r\n\x1a\n\xff\xfe\x00junk")
    (root / "nul").mkdir()
    (root / "nul" / "SKILL.md").write_text("---\nname: nul\ndescription: x\n---\nbo\x00dy\n")
    (root / "no-file").mkdir()
    (root / "README.md").write_text("not a skill folder\n")  # a file in the root: ignored
    found = catalog(roots)
    assert [s.name for s in found.skills] == ["good"]
    text = "\n".join(messages(found))
    for folder, (_, expected) in bad.items():
        line = next(m for m in messages(found) if f"/{folder}/SKILL.md" in m)
        assert expected in line and line.endswith("skipped"), (folder, line)
    assert "/binary/SKILL.md: not valid UTF-8 text; skipped" in text
    assert "/nul/SKILL.md: contains NUL bytes" in text
    assert "/no-file/SKILL.md: no SKILL.md in the folder; skipped" in text
    assert "README" not in text


def test_a_huge_file_is_refused_without_reading_it_whole(roots):
    root = roots["project_reasonix"]
    path = write_skill(root, "huge", skill_md("huge", "x"))
    with path.open("a") as fh:
        fh.write("y" * (MAX_SKILL_BYTES + 10))
    found = catalog(roots)
    assert not found
    assert "larger than 128 KiB" in messages(found)[0]


def test_a_root_with_too_many_folders_is_read_up_to_the_cap(roots, monkeypatch):
    from reasonix_core.skills import discovery

    monkeypatch.setattr(discovery, "MAX_SKILLS_PER_ROOT", 3)
    for i in range(5):
        write_skill(roots["project_reasonix"], f"s{i}", skill_md(f"s{i}", "x"))
    found = catalog(roots)
    assert [s.name for s in found.skills] == ["s0", "s1", "s2"]
    assert "more than 3 skill folders" in messages(found)[0]


def test_a_long_description_is_shortened_with_a_warning(roots):
    write_skill(roots["project_reasonix"], "wordy", skill_md("wordy", "w" * 5000))
    found = catalog(roots)
    assert len(found.get("wordy").description) == 1024
    assert "line 3: description longer than 1024" in messages(found)[0]


def test_a_fifo_does_not_block_discovery(roots):
    root = roots["project_reasonix"] / "fifo"
    root.mkdir(parents=True)
    os.mkfifo(root / "SKILL.md")
    result: list[SkillCatalog] = []
    worker = threading.Thread(target=lambda: result.append(catalog(roots)), daemon=True)
    worker.start()
    worker.join(60)
    assert result, "discovery blocked on a FIFO"
    assert "not a regular file" in messages(result[0])[0]


def test_symlinks_never_lead_out_of_a_skills_root(roots, tmp_path):
    secret = tmp_path / "secret"
    secret.mkdir()
    (secret / "SKILL.md").write_text(skill_md("stolen", "key=sk-live-123"))
    (tmp_path / "key.md").write_text(skill_md("keyfile", "sk-live-456"))
    root = roots["project_reasonix"]
    root.mkdir(parents=True)
    # A skill folder linked out, a SKILL.md linked out, and a link chain out.
    (root / "folder-out").symlink_to(secret)
    (root / "file-out").mkdir()
    (root / "file-out" / "SKILL.md").symlink_to(tmp_path / "key.md")
    (root / "hop").symlink_to(root / "hop2")
    (root / "hop2").symlink_to("../../../secret")
    # A link that stays inside the root is followed.
    write_skill(root, "real", skill_md("inside", "kept"))
    (root / "alias").symlink_to("real")
    # Same rules for a user root.
    (roots["user_claude"]).mkdir(parents=True)
    (roots["user_claude"] / "out").symlink_to(secret)
    found = catalog(roots)
    assert [s.name for s in found.skills] == ["inside"]
    assert all("sk-live" not in s.description for s in found.skills)
    refused = [m for m in messages(found) if "links out of its skills folder" in m]
    assert len(refused) == 5, messages(found)


def test_a_project_root_linked_out_of_the_workspace_is_not_read(roots, tmp_path):
    elsewhere = tmp_path / "elsewhere"
    write_skill(elsewhere, "x", skill_md("x", "outside"))
    (roots["workspace"] / ".claude").mkdir()
    roots["project_claude"].symlink_to(elsewhere)
    found = catalog(roots)
    assert not found
    assert "links out of the project" in messages(found)[0]


def test_a_user_root_may_itself_be_a_link(roots, tmp_path):
    # The user's choice (a dotfiles repository): the root is followed, not what is below it.
    dotfiles = tmp_path / "dotfiles" / "skills"
    write_skill(dotfiles, "mine", skill_md("mine", "from dotfiles"))
    roots["user_reasonix"].symlink_to(dotfiles)
    assert [s.name for s in catalog(roots).skills] == ["mine"]


def test_a_link_swapped_in_after_discovery_is_refused_on_use(roots, tmp_path):
    root = roots["project_reasonix"]
    write_skill(root, "x", skill_md("x", "fine", body="Original."))
    found = catalog(roots)
    (tmp_path / "evil.md").write_text(skill_md("x", "evil", body="Evil."))
    (root / "x" / "SKILL.md").unlink()
    (root / "x" / "SKILL.md").symlink_to(tmp_path / "evil.md")
    with pytest.raises(SkillError, match="links out of its skills folder"):
        found.load("x", by="model")


def test_escape_sequences_and_undecodable_names_are_shown_escaped(roots):
    root = roots["project_reasonix"]
    write_skill(root, "ansi", skill_md("ansi", "Red \x1b[31malert\x1b[0m \u202eevil"))
    write_skill(root, "esc\x1b[2Jname", skill_md("Bad Name", "x"))
    os.makedirs(os.fsencode(root) + b"/caf\xe9")
    (Path(os.fsdecode(os.fsencode(root) + b"/caf\xe9")) / "SKILL.md").write_text("x")
    found = catalog(roots)
    assert found.get("ansi").description == "Red \\x1b[31malert\\x1b[0m \\u202eevil"
    notices = found.notices()
    assert len(notices) == 2
    for text in notices:
        assert "\x1b" not in text and text.encode("utf-8")  # printable, encodable
    assert any("esc\\x1b[2Jname" in t for t in notices)
    assert any("caf\\udce9" in t and "not valid text" in t for t in notices)


# -- the index and on-demand bodies ------------------------------------------------


def test_the_index_is_sorted_and_frozen_while_bodies_are_read_again(roots):
    root = roots["project_reasonix"]
    write_skill(root, "zeta", skill_md("zeta", "last"))
    write_skill(root, "alpha", skill_md("alpha", "first", body="Old body."))
    write_skill(root, "mid", skill_md("mid", "middle", runAs="subagent"))
    found = catalog(roots)
    assert found.index.text == (
        HEADING + "\n\n- alpha: first\n- mid (subagent): middle\n- zeta: last"
    )
    frozen = found.index.text
    write_skill(root, "alpha", skill_md("alpha", "edited description", body="New body."))
    write_skill(root, "beta", skill_md("beta", "added later"))
    assert found.index.text == frozen
    assert found.load("alpha", by="model").body == "New body."
    with pytest.raises(SkillError, match="unknown skill 'beta'"):
        found.load("beta", by="model")
    (root / "zeta" / "SKILL.md").unlink()
    with pytest.raises(SkillError, match=r"zeta.*no SKILL\.md"):
        found.load("zeta", by="model")


def test_the_index_is_capped(roots):
    root = roots["project_reasonix"]
    for i in range(40):
        write_skill(root, f"s{i:02d}", skill_md(f"s{i:02d}", "d" * 1000))
    found = catalog(roots)
    assert len(found.index.text) <= MAX_INDEX_CHARS
    assert found.index.omitted and found.index.omitted[-1] == "s39"
    listed = [line for line in found.index.text.splitlines() if line.startswith("- s")]
    assert len(listed) + len(found.index.omitted) == 40
    assert any("left out of the model's skills index" in n for n in found.notices())
    # An omitted skill still runs by name.
    assert found.load("s39", by="user").name == "s39"


# -- /<skill> expansion ---------------------------------------------------------------


def test_slash_skill_expands_its_body_with_arguments(roots):
    root = roots["project_reasonix"]
    write_skill(root, "greet", skill_md("greet", "Greets", body="Say hello to $1 ($ARGUMENTS)."))
    write_skill(root, "plain", skill_md("plain", "No placeholder", body="Body."))
    write_skill(root, "child", skill_md("child", "Runs apart", runAs="subagent"))
    write_skill(
        root, "hidden", skill_md("hidden", "x", **{"user-invocable": "false"}, body="Nope.")
    )
    found = catalog(roots)
    assert expand_skill_command("/greet Ada Lovelace", found) == (
        "Say hello to Ada (Ada Lovelace)."
    )
    assert expand_skill_command("/plain more text", found) == "Body.\n\nmore text"
    assert expand_skill_command("/plain", found) == "Body."
    assert expand_skill_command("  /greet\tBob  ", found) == "Say hello to Bob (Bob)."
    subagent = expand_skill_command("/child look at x", found)
    assert subagent is not None and "run_skill" in subagent and "look at x" in subagent
    assert expand_skill_command("/unknown x", found) is None
    assert expand_skill_command("greet x", found) is None
    assert expand_skill_command("/", found) is None
    with pytest.raises(SkillError, match="user-invocable"):
        expand_skill_command("/hidden", found)
