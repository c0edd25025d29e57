"""Search at repository scale: the grep, glob and ls tools and ``@`` completion on
generated git repositories, paired in the same run with GNU ``grep -rn`` and ``find``.

Run: .venv/bin/python bench/bench_search.py [--files 30000] [--big 100000]
         [--rounds 5] [--baseline /tmp/search-base]

Trees are generated under a temporary directory (deleted at the end): a git
repository of ``--files`` Python files of about 250 bytes each (7.5 MB for
30,000) in nested folders, with ``.gitignore``d ``build/`` and ``dist/`` folders
and a ``node_modules/`` (the tools skip all three; GNU grep searches them, as in
the issue's measurement). The tools are called the way the agent calls them:
``ToolRegistry.call`` with a real ``ToolContext`` carrying the session's sandbox
(protected paths as ``forbid_read``) and the permission policy's ``read_denied``
with a ``Read(.env)`` deny rule.

Each pair (tool vs command) alternates for ``--rounds`` rounds after a warm-up;
medians are reported with their ratio, and the tool's results are checked
against the command's (complete = the same matches, outside the ignored folders).
``--baseline DIR`` (a checkout of the old code, e.g. ``git worktree add
/tmp/search-base ba3f73b``) also times a small repository with the old and the
new code side by side, each in its own process, alternating.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import anyio

ROOT = Path(__file__).resolve().parent.parent
IGNORED = ("build/", "dist/", "node_modules/", ".git/")
LITERAL = "handle_request"
REGEX = r"def \w+_request\("
MAX_SHOWN = 500  # glob lists at most this many (specs.MAX_RESULTS)


# --------------------------------------------------------------------------- the tree


def make_tree(root: Path, files: int) -> None:
    """A git repository of ``files`` Python files (~250 bytes) in folders of 100,
    three levels deep, one in 997 defining ``handle_request``; plus ignored
    folders and a node_modules."""
    root.mkdir(parents=True)
    subprocess.run(["git", "init", "-q", str(root)], check=True)
    (root / ".gitignore").write_text("build/\ndist/\n*.log\n")
    (root / ".env").write_text("KEY=hidden\n")
    n = 0
    d = 0
    while n < files:
        folder = root / "src" / f"pkg{d // 100}" / f"mod{(d // 10) % 10}" / f"sub{d % 10}"
        folder.mkdir(parents=True)
        for i in range(min(100, files - n)):
            body = (
                f'"""Module {n} of the generated tree."""\n\nimport os\n\n\n'
                f"def f{i}(x):\n    return x + {n}\n\n\n"
                f"class C{i}:\n    value = {n}\n\n"
                f"    def run(self, y):\n        return self.value * y  # item {n}\n"
            )
            if n % 997 == 0:
                body += "\n\ndef handle_request(req):\n    return req\n"
            (folder / f"m{i}.py").write_text(body)
            n += 1
        d += 1
    for name, count in (("build", 1000), ("dist", 500), ("node_modules", 500)):
        folder = root / name
        folder.mkdir()
        for i in range(count):
            (folder / f"m{i}.py").write_text(f"def handle_request(): return {i}\n")


# --------------------------------------------------------------------------- the agent's way


def agent_context(ws: Path, scratch: Path) -> Any:
    """A ToolContext as the session builds one: sandbox with the protected paths,
    the policy's read_denied with a deny rule."""
    from reasonix_core.config import Config
    from reasonix_core.permission.policy import Policy
    from reasonix_core.session.policy import protected_paths
    from reasonix_core.tool import ToolContext
    from reasonix_core.tool.env import SessionEnv
    from reasonix_core.tool.sandbox import SandboxPolicy

    home = scratch / "home"
    temp = scratch / "session-tmp"
    home.mkdir(exist_ok=True)
    temp.mkdir(exist_ok=True)
    cfg = SimpleNamespace(mode="ask", preset="ask", allow=(), ask=(), deny=("Read(.env)",))
    policy = Policy.from_config(cfg, ws, forbid_read=protected_paths(Config(), home, ws))
    sandbox = SandboxPolicy(
        workspace=ws, temp_dir=temp, forbid_read=tuple(Path(p) for p in policy.forbid_read)
    )
    return ToolContext(
        env=SessionEnv(workspace=ws, temp_dir=temp, sandbox=sandbox, read_denied=policy.read_denied)
    )


class Agent:
    def __init__(self, ws: Path, scratch: Path) -> None:
        from reasonix_core.tool import ToolRegistry, builtin_tools

        self.registry = ToolRegistry(builtin_tools())
        self.ctx = agent_context(ws, scratch)
        self.cpu = 0.0  # CPU seconds of the last call

    def call(self, name: str, args: dict[str, Any]) -> tuple[float, Any]:
        raw = json.dumps(args)

        async def go() -> Any:
            return await self.registry.call(name, raw, self.ctx)

        start, cpu = time.perf_counter(), time.process_time()
        result = anyio.run(go)
        elapsed = time.perf_counter() - start
        self.cpu = time.process_time() - cpu  # this process, the worker thread included
        if result.is_error:
            raise SystemExit(f"{name} failed: {result.text}")
        return elapsed, result


LAST_COMMAND_CPU = [0.0]  # CPU seconds (user + system) of the last command


def command(argv: list[str], cwd: Path) -> tuple[float, str]:
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.perf_counter()
    out = subprocess.run(argv, cwd=cwd, capture_output=True, text=True, check=False)
    elapsed = time.perf_counter() - start
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    LAST_COMMAND_CPU[0] = (after.ru_utime + after.ru_stime) - (before.ru_utime + before.ru_stime)
    return elapsed, out.stdout


# --------------------------------------------------------------------------- pairs


def kept(path: str) -> bool:
    path = path.removeprefix("./")
    return not path.startswith(IGNORED) and "/." not in "/" + path


def tool_lines(text: str) -> list[str]:
    return [ln for ln in text.splitlines() if ln and not ln.startswith(("…", "("))]


def pair(
    label: str,
    rounds: int,
    agent: Agent,
    tool: Any,
    cmd: Any,
    same: Any,
) -> dict[str, Any]:
    """Alternate ``tool`` and ``cmd``; print the medians of wall time and of CPU
    time (steadier than wall time on a shared machine) with their ratios."""
    tool(), cmd()  # warm-up: page cache, imports, the regex engine
    walls: tuple[list[float], list[float]] = ([], [])
    cpus: tuple[list[float], list[float]] = ([], [])
    result = out = None
    for _ in range(rounds):
        t, result = tool()
        walls[0].append(t)
        cpus[0].append(agent.cpu)
        c, out = cmd()
        walls[1].append(c)
        cpus[1].append(LAST_COMMAND_CPU[0])
    wt, wc = statistics.median(walls[0]), statistics.median(walls[1])
    ct, cc = statistics.median(cpus[0]), statistics.median(cpus[1])
    complete = same(result, out)
    print(
        f"{label:<44} wall: tool {wt * 1000:7.1f} ms, command {wc * 1000:7.1f} ms, "
        f"{wt / wc:4.2f}x   cpu: {ct * 1000:7.1f} ms, {cc * 1000:7.1f} ms, "
        f"{ct / max(cc, 1e-6):4.2f}x   complete: {complete}"
    )
    return {"label": label, "wall_ratio": wt / wc, "cpu_ratio": ct / max(cc, 1e-6)}


def glob_pair(agent: Agent, ws: Path, name: str, rounds: int) -> dict[str, Any]:
    """glob ``**/name`` vs ``find -name``; with a wildcard in ``name`` find also
    prints each file's modification time, which the tool's newest-first order
    needs too (a stat per match)."""
    argv = ["find", ".", "-name", name]
    if "*" in name:
        argv += ["-printf", "%T@ %p\n"]

    def same(result: Any, out: str) -> str:
        ours = set(tool_lines(result.text))
        theirs = {ln.split(" ", 1)[-1].removeprefix("./") for ln in out.splitlines()}
        theirs = {p for p in theirs if kept(p)}
        if result.meta.get("capped"):  # only the newest are shown
            found = result.meta["matches"]
            ok = ours <= theirs and len(ours) == MAX_SHOWN
            scan = "" if found == len(theirs) else f", glob's scan cap of {found:,} matches"
            return (
                f"{'yes' if ok else 'NO'} ({found:,} of {len(theirs):,} files{scan}; "
                f"newest {len(ours)} shown)"
            )
        ok = ours == theirs
        return f"{'yes' if ok else 'NO'} ({len(ours)} files of {len(theirs)})"

    return pair(
        f"glob **/{name} vs find -name" + (" -printf %T@" if "*" in name else ""),
        rounds,
        agent,
        lambda: agent.call("glob", {"pattern": f"**/{name}"}),
        lambda: command(argv, ws),
        same,
    )


def grep_command(pattern: str) -> list[str]:
    # -E: \( is a literal parenthesis as in Python's syntax (\w is a GNU extension).
    return ["grep", "-rn" if pattern == LITERAL else "-rnE", pattern, "."]


def mention_keystrokes(ws: Path, typed: str) -> None:
    """``@`` completion: the menu for each prefix of ``typed``, as the composer asks."""
    from reasonix_tui.completion import mention_items

    times = []
    for end in range(len(typed) + 1):
        start = time.perf_counter()
        items = mention_items(ws, typed[:end])
        times.append(time.perf_counter() - start)
    assert items, f"no completion for {typed!r}"
    first, rest = times[0], times[1:]
    print(
        f"{'@ completion, ' + str(len(rest)) + ' keystrokes of @' + typed:<44} "
        f"first {first * 1000:6.2f} ms   then median {statistics.median(rest) * 1000:6.2f} ms, "
        f"max {max(rest) * 1000:6.2f} ms per keystroke"
    )


def scale(files: int, rounds: int, scratch: Path) -> None:
    ws = scratch / f"repo{files}"
    start = time.perf_counter()
    make_tree(ws, files)
    print(f"\n{files:,}-file repository (generated in {time.perf_counter() - start:.1f} s)")
    agent = Agent(ws, scratch)
    for pattern in (LITERAL, REGEX):
        cmd = grep_command(pattern)

        def same(result: Any, out: str) -> str:
            ours = {tuple(ln.split(":", 2)[:2]) for ln in tool_lines(result.text)}
            theirs = {
                (p.removeprefix("./"), n)
                for p, n, _ in (ln.split(":", 2) for ln in out.splitlines())
                if kept(p)
            }
            ok = ours == theirs and "stopped early" not in result.text
            return f"{'yes' if ok else 'NO'} ({len(ours)} of {len(theirs)} matches)"

        pair(
            f"grep /{pattern}/ vs {' '.join(cmd[:2])}",
            rounds,
            agent,
            lambda p=pattern: agent.call("grep", {"pattern": p}),
            lambda c=cmd: command(c, ws),
            same,
        )
    glob_pair(agent, ws, "m5.py", rounds)
    glob_pair(agent, ws, "*.py", rounds)
    t, _ = agent.call("ls", {"path": ".", "recursive": True})
    print(f"{'ls recursive (capped at 1000 entries)':<44} tool {t * 1000:8.1f} ms")
    mention_keystrokes(ws, "src/pkg0/mod1/sub2/m42.py")
    shutil.rmtree(ws)


# --------------------------------------------------------------------------- old vs new


SMALL_CALLS = (
    ("grep", {"pattern": LITERAL}),
    ("grep", {"pattern": REGEX}),
    ("glob", {"pattern": "**/*.py"}),
    ("ls", {"path": ".", "recursive": True}),
)


def small_worker(ws: Path, scratch: Path, repeat: int) -> None:
    """Child process: time each small-repository call ``repeat`` times, print JSON."""
    agent = Agent(ws, scratch)
    out = {}
    for name, args in SMALL_CALLS:
        agent.call(name, args)
        times = [agent.call(name, args)[0] for _ in range(repeat)]
        out[f"{name} {json.dumps(args)}"] = statistics.median(times) * 1000
    print(json.dumps(out))


def small_compare(baseline: Path, rounds: int, scratch: Path) -> None:
    ws = scratch / "small"
    make_tree(ws, 300)
    print("\nsmall repository (300 files): old code vs new, medians of alternating processes")
    runs: dict[str, dict[str, list[float]]] = {"old": {}, "new": {}}
    for _ in range(rounds):
        for which, path in (("old", baseline), ("new", ROOT)):
            env = {**os.environ, "PYTHONPATH": str(path)}
            out = subprocess.run(
                [sys.executable, __file__, "--small-worker", str(ws), "--scratch", str(scratch)],
                env=env,
                cwd=scratch,
                capture_output=True,
                text=True,
                check=True,
            ).stdout
            for key, ms in json.loads(out.splitlines()[-1]).items():
                runs[which].setdefault(key, []).append(ms)
    for key in runs["new"]:
        old, new = statistics.median(runs["old"][key]), statistics.median(runs["new"][key])
        print(f"  {key:<52} old {old:7.2f} ms   new {new:7.2f} ms   new/old {new / old:5.2f}")
    shutil.rmtree(ws)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--files", type=int, default=30_000)
    parser.add_argument("--big", type=int, default=100_000, help="0 to skip")
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--baseline", type=Path, default=None)
    parser.add_argument("--small-worker", type=Path, default=None, help=argparse.SUPPRESS)
    parser.add_argument("--scratch", type=Path, default=None, help=argparse.SUPPRESS)
    a = parser.parse_args()
    if a.small_worker is not None:
        small_worker(a.small_worker, a.scratch, 20)
        return
    with tempfile.TemporaryDirectory(prefix="bench-search-", dir="/tmp") as tmp:
        scratch = Path(tmp)
        scale(a.files, a.rounds, scratch)
        if a.big:
            scale(a.big, max(a.rounds // 2, 2), scratch)
        if a.baseline is not None:
            small_compare(a.baseline, a.rounds, scratch)


if __name__ == "__main__":
    main()
