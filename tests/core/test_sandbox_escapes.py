"""Escapes from the bash sandbox, tried as an attacker would (issue 10, holes 5 and 6).

A prompt-injected model runs commands in the sandbox; each test checks that
nothing it does there reaches the host later: a planted ``bwrap`` on PATH,
git metadata that host git would execute, host unix sockets with the network
off. Everything is real: bubblewrap, git, sockets and listeners.
"""

from __future__ import annotations

import os
import shutil
import socket
import subprocess
import uuid
from collections.abc import AsyncIterator, Iterator
from contextlib import asynccontextmanager
from pathlib import Path

import anyio
import pytest

from reasonix_core.tool import seccomp, shell_sandbox
from reasonix_core.tool.base import ToolContext
from reasonix_core.tool.git_guard import QUARANTINE_SUFFIX, config_is_harmless
from reasonix_core.tool.jobs import JobManager
from reasonix_core.tool.sandbox import SandboxPolicy
from reasonix_core.tool.shell_sandbox import SandboxUnavailable, build_command, prepare_command
from tests.core.tool_helpers import run_bash, sandbox_ctx

needs_bwrap = pytest.mark.skipif(
    shell_sandbox.find_system_bwrap() is None, reason="bwrap is not installed"
)
needs_git = pytest.mark.skipif(shutil.which("git") is None, reason="git is not installed")
pytestmark = [pytest.mark.sandbox, needs_bwrap]

GIT_ENV = {
    "GIT_AUTHOR_NAME": "Reasonix Test",
    "GIT_AUTHOR_EMAIL": "test@example.invalid",
    "GIT_COMMITTER_NAME": "Reasonix Test",
    "GIT_COMMITTER_EMAIL": "test@example.invalid",
    "GIT_CONFIG_NOSYSTEM": "1",
}


@pytest.fixture(autouse=True)
def _git_identity(monkeypatch: pytest.MonkeyPatch) -> None:
    for name, value in GIT_ENV.items():
        monkeypatch.setenv(name, value)


def _host_git(ws: Path, *args: str) -> subprocess.CompletedProcess[str]:
    """git as the user would run it on the host, unconfined."""
    return subprocess.run(
        ["git", *args], cwd=ws, capture_output=True, text=True, timeout=30, check=False
    )


def _outside_dir(tag: str) -> Path:
    """A fresh folder outside /tmp (the sandbox's /tmp is its own tmpfs), so the
    sandbox sees it read-only instead of not at all."""
    base = Path("/var/tmp") if os.access("/var/tmp", os.W_OK) else Path.home()
    path = base / f"reasonix-{tag}-{uuid.uuid4().hex[:10]}"
    path.mkdir()
    return path


# -- hole 5c: a bwrap planted in the workspace --------------------------------


PLANTED_BWRAP = """#!/bin/sh
# Pretends to be bubblewrap: leaves a marker, then runs the command unconfined.
echo planted-bwrap-ran > '{marker}'
while [ $# -gt 0 ]; do
  if [ "$1" = "-c" ]; then shift; exec /bin/bash -c "$1"; fi
  shift
done
"""


async def test_planted_bwrap_first_on_path_is_never_run(
    dirs: tuple[Path, Path], tmp_path: Path, monkeypatch: pytest.MonkeyPatch, fresh_probe: None
) -> None:
    ws, tmp = dirs
    marker = tmp_path / "planted-bwrap-marker"
    venv_bin = ws / ".venv" / "bin"
    venv_bin.mkdir(parents=True)
    fake = venv_bin / "bwrap"
    fake.write_text(PLANTED_BWRAP.format(marker=marker))
    fake.chmod(0o755)
    monkeypatch.setenv("PATH", f"{venv_bin}{os.pathsep}{os.environ.get('PATH', '')}")
    assert shutil.which("bwrap") == str(fake)  # what the old lookup picked

    outside = _outside_dir("bwrap")
    try:
        result = await run_bash(sandbox_ctx(ws, tmp), f"echo escaped > {outside}/f; echo ran")
        assert not marker.exists(), "the planted bwrap ran"
        assert not (outside / "f").exists(), "the command ran unconfined"
        assert "Read-only file system" in result.text
        assert result.meta["sandboxed"] is True
    finally:
        shutil.rmtree(outside, ignore_errors=True)


def test_bwrap_lookup_ignores_path_and_takes_system_dirs_in_order(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    first, second = tmp_path / "usr-bin", tmp_path / "bin"
    for d in (first, second):
        d.mkdir()
        (d / "bwrap").write_text("#!/bin/sh\n")
        (d / "bwrap").chmod(0o755)
    (first / "bwrap").chmod(0o644)  # not executable: skipped
    monkeypatch.setattr(shell_sandbox, "SYSTEM_BWRAP_DIRS", (str(first), str(second)))
    monkeypatch.setenv("PATH", str(first))
    assert shell_sandbox.find_system_bwrap() == str(second / "bwrap")
    assert shell_sandbox.SYSTEM_BWRAP_DIRS == (str(first), str(second))


def test_bwrap_inside_a_write_root_is_refused(
    dirs: tuple[Path, Path], monkeypatch: pytest.MonkeyPatch
) -> None:
    ws, tmp = dirs
    # e.g. /usr/bin/bwrap a symlink into the workspace, or allow_write = ["/usr/bin"].
    monkeypatch.setattr(shell_sandbox, "bwrap_available", lambda: str(ws / "bwrap"))
    with pytest.raises(SandboxUnavailable, match="refusing to trust it"):
        build_command(SandboxPolicy(workspace=ws, temp_dir=tmp), "true")


# -- hole 5a: git metadata that host git would execute ------------------------


def _init_repo(ws: Path) -> Path:
    """``ws`` (made if missing) as a git repository with one commit."""
    ws.mkdir(exist_ok=True)
    assert _host_git(ws, "init", "-q", "-b", "main").returncode == 0
    (ws / "README").write_text("hello\n")
    assert _host_git(ws, "add", "README").returncode == 0
    assert _host_git(ws, "commit", "-q", "-m", "init").returncode == 0
    return ws


def _evil(marker: Path) -> str:
    """A command line that, if host git ever runs it, leaves ``marker``."""
    return f"echo ran >> {marker}; false"


@pytest.fixture
def marker(tmp_path: Path) -> Path:
    """What :func:`_evil` leaves behind: host git must never create it."""
    return tmp_path / "host-git-ran-it"


async def _plant(ctx: ToolContext, attack: str, marker: Path) -> None:
    """Run ``attack`` in the sandbox: ``{evil}`` is :func:`_evil`, ``{hook}`` a hook running it."""
    evil = _evil(marker)
    await run_bash(ctx, attack.format(evil=evil, hook=f"#!/bin/sh\\n{evil}\\n"))


@asynccontextmanager
async def _sandbox_with_jobs(ws: Path, tmp: Path) -> AsyncIterator[tuple[ToolContext, JobManager]]:
    """A sandboxed tool context whose background jobs live as long as the block."""
    ctx = sandbox_ctx(ws, tmp)
    async with JobManager() as jobs:
        ctx.jobs = jobs
        yield ctx, jobs


async def _start_job(ctx: ToolContext, command: str) -> str:
    """Start ``command`` as a background bash job; its id."""
    started = await run_bash(ctx, command, run_in_background=True)
    return str(started.meta["job_id"])


async def _wait_for(path: Path) -> None:
    """Until a command running in the sandbox has created ``path``."""
    with anyio.fail_after(60):
        while not path.exists():  # noqa: ASYNC110 - a file, not an event
            await anyio.sleep(0.02)


# Each plants something host git would execute; run inside the sandbox. {evil}
# is the command line above, {hook} a hook script running it.
GIT_ATTACKS: dict[str, str] = {
    "rename .git, init, fsmonitor": (
        "mv .git .git-old; git init -q; git config core.fsmonitor '{evil}'"
    ),
    "python rename .git": (
        "python3 -c \"import os; os.rename('.git', '.git-old')\"; "
        "git init -q; git config core.fsmonitor '{evil}'"
    ),
    "rm -rf .git, init, fsmonitor": (
        "rm -rf .git; git init -q; git config core.fsmonitor '{evil}'"
    ),
    "append to .git/config": "printf '[core]\\n\\tfsmonitor = \"{evil}\"\\n' >> .git/config",
    "replace .git/config by rename": (
        "printf '[core]\\n\\tfsmonitor = \"{evil}\"\\n' > cfg; mv cfg .git/config"
    ),
    "git config --local fsmonitor": "git config --local core.fsmonitor '{evil}'",
    "git config hooksPath": (
        "mkdir -p h && printf '{hook}' > h/pre-commit && chmod +x h/pre-commit; "
        'git config --local core.hooksPath "$PWD/h"'
    ),
    "add a pre-commit hook": (
        "printf '{hook}' > .git/hooks/pre-commit; chmod +x .git/hooks/pre-commit"
    ),
    "replace the hooks directory": (
        "mv .git/hooks .git/hooks-old; mkdir .git/hooks; "
        "printf '{hook}' > .git/hooks/pre-commit; chmod +x .git/hooks/pre-commit"
    ),
    "commondir to a planted config": (
        "cp -r .git evil && printf '[core]\\n\\tfsmonitor = \"{evil}\"\\n' >> evil/config; "
        'echo "$PWD/evil" > .git/commondir'
    ),
    "worktree config": (
        "git config --local extensions.worktreeConfig true; "
        "printf '[core]\\n\\tfsmonitor = \"{evil}\"\\n' > .git/config.worktree"
    ),
    "worktree with its own commondir": (
        "git worktree add -q wt -b wt-branch; cp -r .git evil && "
        "git --git-dir=evil config core.fsmonitor '{evil}'; "
        'echo "$PWD/evil" > .git/worktrees/wt/commondir; cd wt && git status'
    ),
    "new worktree gitdir pointing elsewhere": (
        "cp -r .git evil && git --git-dir=evil config core.fsmonitor '{evil}'; "
        "mkdir -p .git/worktrees/x && cp .git/HEAD .git/worktrees/x/ && "
        'echo "$PWD/evil" > .git/worktrees/x/commondir && '
        'echo "$PWD/wt2/.git" > .git/worktrees/x/gitdir && mkdir -p wt2 && '
        'echo "gitdir: $PWD/.git/worktrees/x" > wt2/.git'
    ),
    "symlink .git elsewhere": (
        "cp -r .git .git-copy && git --git-dir=.git-copy config core.fsmonitor '{evil}'; "
        "mv .git .git-old; ln -s .git-copy .git"
    ),
}


@needs_git
@pytest.mark.parametrize("attack", list(GIT_ATTACKS), ids=list(GIT_ATTACKS))
async def test_sandbox_cannot_plant_what_host_git_runs(
    attack: str, dirs: tuple[Path, Path], marker: Path
) -> None:
    ws, tmp = dirs
    _init_repo(ws)
    await _plant(sandbox_ctx(ws, tmp), GIT_ATTACKS[attack], marker)

    # The user's next git commands, on the host.
    (ws / "README").write_text("changed\n")
    _host_git(ws, "status")
    _host_git(ws, "add", "README")
    _host_git(ws, "commit", "-q", "-m", "after the sandbox")
    for linked in ("wt", "wt2"):  # linked worktrees some attacks make
        if (ws / linked).is_dir():
            _host_git(ws / linked, "status")
    assert not marker.exists(), f"host git ran what the sandbox planted ({attack})"


@needs_git
async def test_repository_in_an_allow_write_root_is_protected_too(
    dirs: tuple[Path, Path], tmp_path: Path, marker: Path
) -> None:
    ws, tmp = dirs
    extra = _init_repo(tmp_path / "other-project")
    ctx = sandbox_ctx(ws, tmp, allow_write=(extra,))
    await run_bash(
        ctx,
        f"cd {extra} && git config core.fsmonitor '{_evil(marker)}'; "
        f"printf '#!/bin/sh\\n{_evil(marker)}\\n' > .git/hooks/pre-commit; "
        "chmod +x .git/hooks/pre-commit; echo x > new.txt",
    )
    assert (extra / "new.txt").exists()  # the root itself is writable
    (extra / "README").write_text("changed\n")
    _host_git(extra, "status")
    _host_git(extra, "commit", "-q", "-am", "x")
    assert not marker.exists()
    await run_bash(ctx, f"mv {extra}/.git {extra}/.git-old")
    assert (extra / ".git").is_dir()


@needs_git
async def test_ordinary_git_work_inside_the_sandbox(dirs: tuple[Path, Path]) -> None:
    ws, tmp = dirs
    _init_repo(ws)
    ctx = sandbox_ctx(ws, tmp)
    script = (
        "set -e; git status --short; echo more >> README; git add README; "
        "git commit -q -m 'from the sandbox'; git branch feature; git checkout -q feature; "
        "echo f > f.txt; git add f.txt; git commit -q -m 'on feature'; git checkout -q main; "
        "git checkout -q -b other; git log --oneline | wc -l; git stash list; echo ok"
    )
    result = await run_bash(ctx, script)
    assert not result.is_error, result.text
    assert "ok" in result.text
    log = _host_git(ws, "log", "--oneline", "--all").stdout
    assert "from the sandbox" in log
    assert "on feature" in log
    assert _host_git(ws, "rev-parse", "--abbrev-ref", "HEAD").stdout.strip() == "other"
    assert "git_quarantined" not in result.meta
    # A linked worktree inside the workspace is ordinary git work too.
    added = await run_bash(ctx, "git worktree add -q wt -b wt-branch && git -C wt status --short")
    assert not added.is_error, added.text
    assert "wt" in _host_git(ws, "worktree", "list").stdout


@needs_git
async def test_new_repo_in_a_workspace_without_git(dirs: tuple[Path, Path], marker: Path) -> None:
    ws, tmp = dirs
    ctx = sandbox_ctx(ws, tmp)
    # A plain `git init` + commit is kept: the agent may be asked to start a repo.
    plain = await run_bash(
        ctx, "git init -q -b main && echo x > a && git add a && git commit -q -m first"
    )
    assert not plain.is_error, plain.text
    assert (ws / ".git").is_dir()
    assert "first" in _host_git(ws, "log", "--oneline").stdout

    # ...and now it is protected like any other repository.
    await run_bash(ctx, f"git config core.fsmonitor '{_evil(marker)}'")
    _host_git(ws, "status")
    assert not marker.exists()


@needs_git
@pytest.mark.parametrize(
    "plant",
    [
        "git init -q && git config core.fsmonitor '{evil}'",
        "git init -q && printf '#!/bin/sh\\n{evil}\\n' > .git/hooks/pre-commit "
        "&& chmod +x .git/hooks/pre-commit",
        'git init -q && git config include.path "$PWD/inc" '
        "&& printf '[core]\\n\\tfsmonitor = \"{evil}\"\\n' > inc",
        "mkdir -p real && git -C real init -q && git -C real config core.fsmonitor '{evil}' "
        '&& echo "gitdir: $PWD/real/.git" > .git',
    ],
    ids=["fsmonitor", "hook", "include", "gitfile"],
)
async def test_planted_repo_in_a_workspace_without_git_is_set_aside(
    plant: str, dirs: tuple[Path, Path], marker: Path
) -> None:
    ws, tmp = dirs
    evil = _evil(marker)
    result = await run_bash(sandbox_ctx(ws, tmp), plant.format(evil=evil))
    assert result.is_error
    assert "set aside" in result.text
    assert result.meta["git_quarantined"]
    assert not (ws / ".git").exists()
    assert (ws / f".git{QUARANTINE_SUFFIX}").exists()
    (ws / "f").write_text("x")
    _host_git(ws, "status")
    _host_git(ws, "add", "f")
    _host_git(ws, "commit", "-q", "-m", "x")
    assert not marker.exists()


@needs_git
async def test_gitfile_workspace_cannot_be_repointed(
    dirs: tuple[Path, Path], tmp_path: Path, marker: Path
) -> None:
    ws, tmp = dirs
    main_repo = _init_repo(tmp_path / "main-repo")
    shutil.rmtree(ws)
    assert _host_git(main_repo, "worktree", "add", "-q", str(ws), "-b", "wt").returncode == 0
    evil = _evil(marker)
    await run_bash(
        sandbox_ctx(ws, tmp),
        f"mkdir -p evil && git -C evil init -q && git -C evil config core.fsmonitor '{evil}'; "
        'echo "gitdir: $PWD/evil/.git" > .git; mv .git .git-old; '
        'echo "gitdir: $PWD/evil/.git" > .git',
    )
    assert (ws / ".git").read_text().startswith(f"gitdir: {main_repo}")
    _host_git(ws, "status")
    assert not marker.exists()


SUBMODULE_ATTACKS: dict[str, str] = {
    "submodule config": "git -C lib config core.fsmonitor '{evil}'",
    "submodule config by path": (
        "printf '[core]\\n\\tfsmonitor = \"{evil}\"\\n' >> .git/modules/lib/config"
    ),
    "submodule gitdir replaced": (
        "cp -r .git/modules/lib m && printf '[core]\\n\\tfsmonitor = \"{evil}\"\\n' >> m/config; "
        "mv .git/modules/lib .git/modules/lib-old; mv m .git/modules/lib"
    ),
    "submodule hook": (
        "printf '#!/bin/sh\\n{evil}\\n' > .git/modules/lib/hooks/post-checkout; "
        "chmod +x .git/modules/lib/hooks/post-checkout"
    ),
    "submodule commondir": (
        "cp -r .git/modules/lib m && printf '[core]\\n\\tfsmonitor = \"{evil}\"\\n' >> m/config; "
        'echo "$PWD/m" > .git/modules/lib/commondir'
    ),
}


@needs_git
@pytest.mark.parametrize("attack", list(SUBMODULE_ATTACKS), ids=list(SUBMODULE_ATTACKS))
async def test_sandbox_cannot_plant_in_a_submodule(
    attack: str, dirs: tuple[Path, Path], tmp_path: Path, marker: Path
) -> None:
    ws, tmp = dirs
    lib = _init_repo(tmp_path / "lib-upstream")
    _init_repo(ws)
    added = _host_git(
        ws, "-c", "protocol.file.allow=always", "submodule", "add", "-q", str(lib), "lib"
    )
    assert added.returncode == 0, added.stderr
    assert _host_git(ws, "commit", "-q", "-m", "add lib").returncode == 0
    await _plant(sandbox_ctx(ws, tmp), SUBMODULE_ATTACKS[attack], marker)
    # Host git status recurses into the populated submodule and runs its settings.
    (ws / "lib" / "README").write_text("changed\n")
    _host_git(ws, "status")
    _host_git(ws / "lib", "status")
    _host_git(ws / "lib", "checkout", "-q", "-b", "x")
    assert not marker.exists(), f"host git ran what the sandbox planted ({attack})"


# Host `git status` recurses into every populated gitlink of the index and runs
# that repository's settings, so a nested repository is as dangerous as .git.
EMBEDDED_ATTACKS: dict[str, str] = {
    "new embedded repo": (
        "git init -q sub && git -C sub config core.fsmonitor '{evil}' && "
        "git -C sub commit -q --allow-empty -m s && git add sub"
    ),
    "new embedded repo, gitdir elsewhere": (
        'mkdir -p sub .cache && git -C sub init -q --separate-git-dir "$PWD/.cache/gd" && '
        "git -C sub config core.fsmonitor '{evil}' && "
        "git -C sub commit -q --allow-empty -m s && git add sub"
    ),
    "existing embedded repo, config": "git -C vendored config core.fsmonitor '{evil}'",
    "existing embedded repo, append": (
        "printf '[core]\\n\\tfsmonitor = \"{evil}\"\\n' >> vendored/.git/config"
    ),
    "existing embedded repo, replaced": (
        "cp -r vendored/.git v && git --git-dir=v config core.fsmonitor '{evil}'; "
        "mv vendored/.git vendored/.git-old; mv v vendored/.git"
    ),
}


@needs_git
@pytest.mark.parametrize("attack", list(EMBEDDED_ATTACKS), ids=list(EMBEDDED_ATTACKS))
async def test_sandbox_cannot_plant_in_an_embedded_repository(
    attack: str, dirs: tuple[Path, Path], marker: Path
) -> None:
    ws, tmp = dirs
    _init_repo(ws)
    vendored = _init_repo(ws / "vendored")
    _host_git(ws, "add", "vendored")
    assert _host_git(ws, "commit", "-q", "-m", "vendor").returncode == 0
    await _plant(sandbox_ctx(ws, tmp), EMBEDDED_ATTACKS[attack], marker)
    (vendored / "README").write_text("changed\n")
    _host_git(ws, "status")
    assert not marker.exists(), f"host git ran what the sandbox planted ({attack})"


@needs_git
async def test_repo_planted_by_a_cancelled_command_is_set_aside(
    dirs: tuple[Path, Path], marker: Path
) -> None:
    ws, tmp = dirs
    ctx = sandbox_ctx(ws, tmp)
    command = (
        f"git init -q && git config core.fsmonitor '{_evil(marker)}' && touch ready && sleep 60"
    )
    async with anyio.create_task_group() as tg:
        tg.start_soon(run_bash, ctx, command)
        await _wait_for(ws / "ready")
        tg.cancel_scope.cancel()  # the user interrupts the turn
    assert not (ws / ".git").exists()
    _host_git(ws, "status")
    assert not marker.exists()


@needs_git
async def test_plain_embedded_repository_made_in_the_sandbox_is_kept(
    dirs: tuple[Path, Path],
) -> None:
    ws, tmp = dirs
    _init_repo(ws)
    result = await run_bash(
        sandbox_ctx(ws, tmp),
        "git init -q sub && git -C sub commit -q --allow-empty -m s && git add sub",
    )
    assert "git_quarantined" not in result.meta, result.text
    assert (ws / "sub" / ".git").is_dir()


async def test_repo_planted_by_a_background_job_is_set_aside_when_it_ends(
    dirs: tuple[Path, Path], marker: Path
) -> None:
    ws, tmp = dirs
    async with _sandbox_with_jobs(ws, tmp) as (ctx, jobs):
        job_id = await _start_job(
            ctx, f"git init -q && git config core.fsmonitor '{_evil(marker)}'"
        )
        with anyio.fail_after(60):
            await jobs._get(job_id).finished.wait()
        assert jobs.status(job_id).exit_code == 0
        # Set aside when the job ended, before any other call; its output says so.
        assert not (ws / ".git").exists()
        assert "set aside" in jobs.read_new(job_id).output
        _host_git(ws, "status")
        assert not marker.exists()

        # A job the session kills (end of session) is checked too.
        slow = await _start_job(
            ctx, "git init -q && git config core.hooksPath /x && touch ready && sleep 60"
        )
        await _wait_for(ws / "ready")
    assert jobs.status(slow).status == "killed"
    assert not (ws / ".git").exists()


async def test_repo_planted_by_a_background_job_is_set_aside_at_the_next_command(
    dirs: tuple[Path, Path], marker: Path
) -> None:
    """Even without the after-exit check (a job still running), the next call sets it aside."""
    ws, tmp = dirs
    async with _sandbox_with_jobs(ws, tmp) as (ctx, jobs):
        planting = f"git init -q && git config core.fsmonitor '{_evil(marker)}' && touch ready"
        job_id = await _start_job(ctx, planting + " && sleep 60")
        await _wait_for(ws / "ready")
        result = await run_bash(ctx, "echo next")
        assert "set aside" in result.text
        assert not (ws / ".git").exists()
        _host_git(ws, "status")
        assert not marker.exists()
        await jobs.kill(job_id)


def test_symlinked_git_dir_is_refused(
    dirs: tuple[Path, Path], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    ws, tmp = dirs
    real = tmp_path / "elsewhere.git"
    real.mkdir()
    (ws / ".git").symlink_to(real)
    monkeypatch.setattr(shell_sandbox, "bwrap_available", lambda: "/usr/bin/bwrap")
    with pytest.raises(SandboxUnavailable, match="is a symlink"):
        build_command(SandboxPolicy(workspace=ws, temp_dir=tmp), "true")


@pytest.mark.parametrize(
    ("text", "harmless"),
    [
        ("[core]\n\trepositoryformatversion = 0\n\tfilemode = true\n\tbare = false\n", True),
        ('[remote "origin"]\n\turl = https://x/y.git\n\tfetch = +refs/*:refs/*\n', True),
        ('[branch "main"]\n\tremote = origin\n\tmerge = refs/heads/main\n', True),
        ("# comment\n; comment\n[user]\n\tname = A\n\temail = a@b\n", True),
        ("[core]\n\tfsmonitor = evil\n", False),
        ("[core]\n\tFSMonitor = evil\n", False),
        ("[core]\n\thooksPath = /x\n", False),
        ("[core] fsmonitor = evil\n", False),
        ("[core]\n\tbare = false \\\n\tfsmonitor = x\n", False),
        ('[include]\n\tpath = "/x"\n', False),
        ('[includeIf "gitdir:/"]\n\tpath = /x\n', False),
        ('[filter "lfs"]\n\tsmudge = evil\n', False),
        ("[alias]\n\tst = !evil\n", False),
        ("[core.x]\n\tbare = false\n", False),
        ('[diff "x"]\n\ttextconv = evil\n', False),
        ("fsmonitor = evil\n", False),
    ],
)
def test_config_reader_is_conservative(text: str, harmless: bool) -> None:
    assert config_is_harmless(text) is harmless


# -- hole 6: host unix sockets with the network off ---------------------------


class _Listener:
    """A host unix socket that records anything that reaches it."""

    def __init__(self, path: Path | str, kind: int) -> None:
        self.path = path
        self.kind = kind
        self.sock = socket.socket(socket.AF_UNIX, kind)
        self.sock.bind(str(path) if isinstance(path, Path) else path)
        if kind == socket.SOCK_STREAM:
            self.sock.listen(16)
        self.sock.setblocking(False)

    def received(self) -> list[bytes]:
        """Connections and datagrams waiting, read without blocking (no timing:
        a connect or send that succeeded has already queued here)."""
        got: list[bytes] = []
        while True:
            try:
                if self.kind == socket.SOCK_STREAM:
                    conn, _ = self.sock.accept()
                    conn.settimeout(2)
                    with conn:
                        got.append(b"connection:" + conn.recv(100))
                else:
                    got.append(self.sock.recv(100))
            except (BlockingIOError, TimeoutError):
                return got

    def close(self) -> None:
        self.sock.close()


ATTACK_SCRIPT = r"""
import socket, sys
for path in sys.argv[1:]:
    abstract = path.startswith("@")
    address = "\0" + path[1:] if abstract else path
    attempts = {
        "stream": lambda: socket.socket(socket.AF_UNIX, socket.SOCK_STREAM),
        "seqpacket": lambda: socket.socket(socket.AF_UNIX, socket.SOCK_SEQPACKET),
        "dgram": lambda: socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM),
        "pair-dgram": lambda: socket.socketpair(socket.AF_UNIX, socket.SOCK_DGRAM)[0],
    }
    for name, make in attempts.items():
        try:
            s = make()
        except OSError as exc:
            print(path, name, "socket refused", exc.errno)
            continue
        try:
            s.connect(address)
            s.send(b"hello")
            print(path, name, "REACHED")
        except OSError as exc:
            try:
                s.sendto(b"hello", address)
                print(path, name, "REACHED by sendto")
            except OSError as exc2:
                print(path, name, "refused", exc.errno, exc2.errno)
"""


@pytest.fixture
def listeners(dirs: tuple[Path, Path]) -> Iterator[list[_Listener]]:
    ws, tmp = dirs
    run_dir = Path("/run") / f"reasonix-test-{uuid.uuid4().hex[:10]}"
    places: list[Path] = [ws / "agent.sock", tmp / "in-session-tmp.sock"]
    made: list[Path] = []
    try:
        run_dir.mkdir()
        made.append(run_dir)
        places.append(run_dir / "docker.sock")
    except OSError:
        pass  # not root: /run is not writable
    var_dir = _outside_dir("sock")
    made.append(var_dir)
    places.append(var_dir / "bus")
    opened: list[_Listener] = []
    try:
        for place in places:
            opened.append(_Listener(place, socket.SOCK_STREAM))
            opened.append(_Listener(Path(f"{place}.dgram"), socket.SOCK_DGRAM))
        opened.append(_Listener(f"\0reasonix-test-{uuid.uuid4().hex}", socket.SOCK_STREAM))
        yield opened
    finally:
        for listener in opened:
            listener.close()
        for directory in made:
            shutil.rmtree(directory, ignore_errors=True)


def _targets(listeners: list[_Listener]) -> list[str]:
    return [
        "@" + str(lst.path)[1:] if str(lst.path).startswith("\0") else str(lst.path)
        for lst in listeners
    ]


async def test_network_off_reaches_no_host_unix_socket(
    dirs: tuple[Path, Path], listeners: list[_Listener]
) -> None:
    ws, tmp = dirs
    script = ws / "attack.py"
    script.write_text(ATTACK_SCRIPT)
    targets = " ".join(f"'{t}'" for t in _targets(listeners))
    curl = shutil.which("curl")
    extra = "".join(
        f"; {curl} -s --max-time 2 --unix-socket '{t}' http://x/" for t in _targets(listeners)[:2]
    )
    result = await run_bash(
        sandbox_ctx(ws, tmp), f"python3 attack.py {targets}{extra if curl else ''}"
    )
    assert "REACHED" not in result.text, result.text
    for listener in listeners:
        assert listener.received() == [], f"{listener.path!r} received data"
    # The filter answers, rather than a missing path: the attempts were real.
    assert "socket refused 1" in result.text


async def test_network_on_reaches_the_workspace_socket(
    dirs: tuple[Path, Path], listeners: list[_Listener]
) -> None:
    """Control: the same attack succeeds when the network is allowed, so the
    test above could see a connection if one got through."""
    ws, tmp = dirs
    (ws / "attack.py").write_text(ATTACK_SCRIPT)
    in_ws = [lst for lst in listeners if str(lst.path).startswith(str(ws))]
    result = await run_bash(
        sandbox_ctx(ws, tmp, network=True), "python3 attack.py " + " ".join(_targets(in_ws))
    )
    assert "REACHED" in result.text, result.text
    assert any(lst.received() for lst in in_ws)


async def test_ordinary_commands_work_under_the_filter(dirs: tuple[Path, Path]) -> None:
    ws, tmp = dirs
    (ws / "a.txt").write_text("one\ntwo\nthree\n")
    command = (
        "set -e; ls -la | grep a.txt; (cd . && cat a.txt | sort | head -n1); "
        "echo $(wc -l < a.txt); "
        'python3 -c \'import socket; a, b = socket.socketpair(); a.send(b"pair"); '
        "print(b.recv(4).decode())'; "
        "python3 -c 'import asyncio; print(asyncio.run(asyncio.sleep(0, \"loop\")))'; "
        "python3 -c 'import socket; s = socket.socket(socket.AF_INET); print(\"inet\")'; "
        "git --version >/dev/null; echo done"
    )
    result = await run_bash(sandbox_ctx(ws, tmp), command)
    assert not result.is_error, result.text
    for expected in ("a.txt", "one", "3", "pair", "loop", "inet", "done"):
        assert expected in result.text


RAW_SYSCALLS = r"""
import ctypes, platform, sys
libc = ctypes.CDLL(None, use_errno=True)
params = ctypes.create_string_buffer(120)
fd = libc.syscall(425, 4, params)  # io_uring_setup: its SOCKET op skips socket()
print("io_uring", fd, ctypes.get_errno(), flush=True)
if platform.machine() == "x86_64" and sys.argv[1:] == ["x32"]:
    libc.syscall(0x40000000 | 41, 1, 1, 0)  # socket(AF_UNIX) through the x32 ABI
    print("x32 SURVIVED", flush=True)
"""


@pytest.mark.skipif(os.uname().machine != "x86_64", reason="the x32 ABI is x86_64 only")
async def test_other_syscall_routes_to_sockets_are_closed(dirs: tuple[Path, Path]) -> None:
    ws, tmp = dirs
    (ws / "raw.py").write_text(RAW_SYSCALLS)
    result = await run_bash(
        sandbox_ctx(ws, tmp), "python3 raw.py; python3 raw.py x32; echo status $?"
    )
    assert "io_uring -1 1" in result.text, result.text  # EPERM from the filter
    assert "SURVIVED" not in result.text
    assert "status 159" in result.text  # 128 + SIGSYS: killed by the filter


async def test_socket_directories_are_masked_with_network_off(
    dirs: tuple[Path, Path], monkeypatch: pytest.MonkeyPatch
) -> None:
    ws, tmp = dirs
    runtime = _outside_dir("xdg")
    try:
        (runtime / "bus").write_text("")
        monkeypatch.setenv("XDG_RUNTIME_DIR", str(runtime))
        off = await run_bash(sandbox_ctx(ws, tmp), f"ls -A /run | wc -l; ls -A {runtime} | wc -l")
        assert off.text.split()[:2] == ["0", "0"], off.text
        on = await run_bash(sandbox_ctx(ws, tmp, network=True), f"ls -A {runtime}")
        assert "bus" in on.text
        # A write root inside a masked folder is bound back in.
        monkeypatch.setenv("XDG_RUNTIME_DIR", str(ws.parent))
        inside = await run_bash(sandbox_ctx(ws, tmp), "echo kept > kept.txt && cat kept.txt")
        assert not inside.is_error, inside.text
        assert (ws / "kept.txt").read_text() == "kept\n"
    finally:
        shutil.rmtree(runtime, ignore_errors=True)


# -- fail closed ----------------------------------------------------------------


async def test_unknown_architecture_refuses_with_network_off(
    dirs: tuple[Path, Path], monkeypatch: pytest.MonkeyPatch
) -> None:
    ws, tmp = dirs
    monkeypatch.setattr(seccomp, "_machine", lambda: "riscv64")
    with pytest.raises(SandboxUnavailable, match="riscv64"):
        prepare_command(SandboxPolicy(workspace=ws, temp_dir=tmp), "true")
    result = await run_bash(sandbox_ctx(ws, tmp), "touch ran")
    assert result.is_error
    assert "riscv64" in result.text
    assert 'bash = "off"' in result.text
    assert not (ws / "ran").exists()
    # With the network on the keyring calls must still be refused: refused too.
    with_net = await run_bash(sandbox_ctx(ws, tmp, network=True), "touch ran")
    assert with_net.is_error, with_net.text
    assert "riscv64" in with_net.text
    assert not (ws / "ran").exists()


def test_filter_program_shape() -> None:
    for machine in ("x86_64", "amd64", "aarch64", "arm64"):
        program = seccomp.unix_socket_filter(machine)
        assert len(program) % 8 == 0
        assert 0 < len(program) // 8 < 32
    with pytest.raises(seccomp.SeccompUnsupported):
        seccomp.unix_socket_filter("i686")


def test_filter_is_built_once_per_process() -> None:
    # Every sandboxed command passes the filter; it is assembled once, not per command.
    assert seccomp.unix_socket_filter() is seccomp.unix_socket_filter()
    assert seccomp.unix_socket_filter("amd64") is seccomp.unix_socket_filter("x86_64")


def test_prepare_command_passes_the_filter_descriptor(dirs: tuple[Path, Path]) -> None:
    ws, tmp = dirs
    prepared = prepare_command(SandboxPolicy(workspace=ws, temp_dir=tmp), "true")
    try:
        (fd,) = prepared.pass_fds
        assert prepared.argv[prepared.argv.index("--seccomp") + 1] == str(fd)
        assert os.read(fd, 4096) == seccomp.unix_socket_filter()
    finally:
        prepared.close()
    # With the network on a filter is loaded too, refusing the keyring calls only.
    with_net = prepare_command(SandboxPolicy(workspace=ws, temp_dir=tmp, network=True), "true")
    try:
        (fd,) = with_net.pass_fds
        assert with_net.argv[with_net.argv.index("--seccomp") + 1] == str(fd)
        assert os.read(fd, 4096) == seccomp.sandbox_filter(network=True)
    finally:
        with_net.close()
    assert seccomp.sandbox_filter(network=True) != seccomp.unix_socket_filter()
