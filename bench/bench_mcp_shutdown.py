"""Does a headless run whose MCP servers went unused wait for them at exit? (issue 31 item 5)

Each measurement is the wall time of a real ``reasonix run`` process (spawn to exit)
against the loopback fixture server, in a workspace with no server, one Python stdio
server (the example plugin, which imports the MCP SDK) or one Node server (the
reference ``server-everything``, when ``scripts/test`` installed it into .cache/npm).
Two runs: ``answer`` (the model answers, in about ``--answer-ms``) and ``tool`` (one
``ls`` call, then the answer). No run uses its server. The ratio is each mode's median
over the no-server median: 1.0 is "the servers cost nothing".

``--before DIR`` also runs an older tree exported to DIR (``git archive <commit> |
tar -x -C DIR``) with ``python -m reasonix_tui.cli``, interleaved with this tree's,
so both are measured under the same load.

Run: ``.venv/bin/python bench/bench_mcp_shutdown.py [--runs 8] [--before /tmp/before]``
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from _common import ROOT, bench_env, summary_ms, write_config

from reasonix_testkit import ChatDialect, FixtureServer, RecordedRequest, Reply, ToolCallSpec

EXAMPLE = ROOT / "examples" / "reasonix-plugin-example" / "server.py"
EVERYTHING = (
    ROOT / ".cache/npm/node_modules/@modelcontextprotocol/server-everything/dist/index.js"
)


def servers() -> dict[str, str]:
    """Mode -> the workspace's reasonix.toml."""
    python = (
        f'[[mcp.servers]]\nname = "example"\ncommand = {json.dumps(sys.executable)}\n'
        f"args = [{json.dumps(str(EXAMPLE))}]\n"
    )
    out = {"none": "", "python": python}
    if EVERYTHING.is_file():
        out["node"] = (
            f'[[mcp.servers]]\nname = "everything"\ncommand = "node"\n'
            f'args = [{json.dumps(str(EVERYTHING))}, "stdio"]\n'
        )
    return out


def one_run(command: list[str], workspace: Path, env: dict[str, str], prompt: str) -> float:
    started = time.monotonic()
    proc = subprocess.run(
        [*command, "run", prompt, "--trust-project"],
        env=env,
        cwd=workspace,
        stdin=subprocess.DEVNULL,
        capture_output=True,
        text=True,
        timeout=120,
    )
    elapsed = time.monotonic() - started
    if proc.returncode != 0:
        sys.exit(f"run failed in {workspace.name}:\n{proc.stderr[-3000:]}")
    return elapsed


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--runs", type=int, default=8)
    parser.add_argument("--answer-ms", type=int, default=600)
    parser.add_argument("--before", type=Path, default=None)
    args = parser.parse_args()
    delay = args.answer_ms / 1000 / 10  # ten content deltas

    def responder(request: RecordedRequest) -> Reply:
        messages = (request.json or {}).get("messages") or []
        if "list files" in json.dumps(messages[-1]) and messages[-1].get("role") == "user":
            return Reply(tool_calls=[ToolCallSpec("ls", "{}")])
        return Reply(content="done " * 10, chunk_size=5, delay=delay)

    trees = {"after": [str(Path(sys.executable).parent / "reasonix")]}
    if args.before is not None:
        trees = {"before": [sys.executable, "-m", "reasonix_tui.cli"], **trees}
    prompts = {"answer": "hi", "tool": "list files"}
    modes = servers()
    with (
        tempfile.TemporaryDirectory(prefix="reasonix-bench-mcp-exit-") as tmp,
        FixtureServer(ChatDialect("deepseek"), api_key=None) as server,
    ):
        base = Path(tmp)
        server.responder = responder
        write_config(base / "home", server.base_url)
        env = bench_env(base / "home", pycache=base / "pycache")
        envs = {"after": env}
        if args.before is not None:
            envs["before"] = {**env, "PYTHONPATH": str(args.before)}
        workspaces = {}
        for mode, toml in modes.items():
            workspace = base / f"ws-{mode}"
            workspace.mkdir()
            (workspace / "reasonix.toml").write_text(toml, encoding="utf-8")
            workspaces[mode] = workspace
        results: dict[tuple[str, str, str], list[float]] = {}
        for round_ in range(args.runs + 1):  # the first round warms the bytecode caches
            for tree, command in trees.items():
                for run, prompt in prompts.items():
                    for mode in modes:
                        value = one_run(command, workspaces[mode], envs[tree], prompt)
                        if round_:
                            results.setdefault((tree, run, mode), []).append(value)
    summary = []
    for tree in trees:
        for run in prompts:
            base_ms = statistics.median(results[(tree, run, "none")]) * 1000
            for mode in modes:
                values = results[(tree, run, mode)]
                ratio = statistics.median(values) * 1000 / base_ms
                print(f"{tree:6} {run:6} {mode:6}: {summary_ms(values)}  ratio {ratio:.2f} x")
                if mode != "none":
                    summary.append(f"{tree}_{run}_{mode}={ratio:.3f}")
    load = os.getloadavg()[0] if hasattr(os, "getloadavg") else 0.0
    print("SUMMARY mcp_shutdown " + " ".join(summary) + f" load={load:.1f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
