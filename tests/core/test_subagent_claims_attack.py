"""Issue 29, second adversarial pass over subagent write claims and git
metadata: claims spelled to reach a git directory by another road (a symlink, a
separate git dir inside the claim, a submodule's git dir, ``.`` spellings)."""

from __future__ import annotations

import shutil
import subprocess

import pytest

from reasonix_testkit import Reply
from tests.conftest import write_config
from tests.core.agent_helpers import run_turn, runtime
from tests.core.subagent_helpers import call, calls, install

pytestmark = [
    pytest.mark.usefixtures("configured"),
    pytest.mark.skipif(shutil.which("bwrap") is None, reason="bwrap is not installed"),
]

PARENT = "PARENT-TASK: delegate a confined change"


def _git(*args: str) -> None:
    subprocess.run(["git", *args], check=True, capture_output=True)


def _layout(workspace, kind: str) -> str:
    """A workspace whose git directory is reachable inside the claimed ``sub``;
    the hooks folder a child would plant into."""
    (workspace / "sub").mkdir()
    if kind == "separate":  # git init --separate-git-dir: the gitdir sits in sub/
        _git("init", "-q", f"--separate-git-dir={workspace / 'sub' / 'repo.git'}", str(workspace))
        return "sub/repo.git/hooks"
    _git("init", "-q", str(workspace))
    if kind == "symlink":  # sub/g -> ../.git
        (workspace / "sub" / "g").symlink_to("../.git")
        return "sub/g/hooks"
    if kind == "nested":  # a repository of its own inside the claim
        _git("init", "-q", str(workspace / "sub" / "inner"))
        return "sub/inner/.git/hooks"
    raise AssertionError(kind)


@pytest.mark.parametrize("kind", ["separate", "symlink", "nested"])
@pytest.mark.parametrize("claim", ["sub", "sub/**", "./sub/", "sub/."])
async def test_a_claim_never_makes_a_git_directory_writable(workspace, server, home, kind, claim):
    write_config(home, server.base_url, extra="")
    config = home / "config.toml"
    config.write_text(config.read_text().replace('bash = "off"', 'bash = "enforce"'))
    hooks = _layout(workspace, kind)
    script = install(server)
    script.when(
        PARENT,
        call("task", "call_g", prompt="CHILD-GIT: plant a hook", write_paths=[claim]),
        Reply(content="parent done"),
    )
    script.when(
        "CHILD-GIT",
        calls(
            ("bash", {"command": f"printf '#!/bin/sh\\necho pwned\\n' > {hooks}/pre-commit"}),
            ("write_file", {"path": f"{hooks}/post-commit", "content": "#!/bin/sh\n"}),
            ("bash", {"command": "echo ok > sub/fine.txt"}),
        ),
        Reply(content="planted"),
    )
    async with runtime(workspace, permission_mode="yolo") as rt:
        await run_turn(rt, PARENT)
    real_hooks = (workspace / hooks).resolve()
    assert not (real_hooks / "pre-commit").exists()
    assert not (real_hooks / "post-commit").exists()
