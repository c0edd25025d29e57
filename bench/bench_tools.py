"""Per-call host overhead of the file tools and of sandboxed vs unsandboxed bash.

Run: .venv/bin/python bench/bench_tools.py

Measures ToolRegistry.call end to end (argument parsing, validation, sandbox
path checks, observation ledger, the real file I/O) on a small file in a temp
workspace, and `bash true` with `[sandbox] bash = "enforce"` (bubblewrap) and
`"off"`. Figures are medians over many calls on this machine.
"""

from __future__ import annotations

import json
import statistics
import tempfile
import time
from pathlib import Path

import anyio

from reasonix_core.tool import ToolContext, ToolRegistry, builtin_tools
from reasonix_core.tool.env import SessionEnv
from reasonix_core.tool.sandbox import SandboxPolicy
from reasonix_core.tool.shell_sandbox import bwrap_available


async def timed(
    registry: ToolRegistry, ctx: ToolContext, name: str, args: dict, n: int
) -> list[float]:
    raw = json.dumps(args)
    out = []
    for _ in range(n):
        start = time.perf_counter()
        result = await registry.call(name, raw, ctx)
        out.append((time.perf_counter() - start) * 1000)
        if result.is_error:
            raise SystemExit(f"{name} failed: {result.text}")
    return out


def report(label: str, samples: list[float]) -> None:
    samples = sorted(samples)
    p90 = samples[int(len(samples) * 0.9) - 1]
    print(
        f"{label:<34} median {statistics.median(samples):7.3f} ms   p90 {p90:7.3f} ms   n={len(samples)}"
    )


async def main() -> None:
    registry = ToolRegistry(builtin_tools())
    with tempfile.TemporaryDirectory() as tmp:
        ws = Path(tmp) / "ws"
        ws.mkdir()
        temp = Path(tmp) / "t"
        temp.mkdir()
        (ws / "module.py").write_text("".join(f"line_{i} = {i}\n" for i in range(200)))
        for mode in ("off", "enforce"):
            ctx = ToolContext(
                env=SessionEnv(
                    workspace=ws,
                    temp_dir=temp,
                    sandbox=SandboxPolicy(workspace=ws, temp_dir=temp, bash=mode),
                )
            )
            if mode == "off":
                report(
                    "read_file (200 lines)",
                    await timed(registry, ctx, "read_file", {"path": "module.py"}, 300),
                )
                samples = []
                for i in range(300):
                    old, new = f"line_5 = {i}\n" if i else "line_5 = 5\n", f"line_5 = {i + 1}\n"
                    samples += await timed(
                        registry,
                        ctx,
                        "edit_file",
                        {"path": "module.py", "old_string": old, "new_string": new},
                        1,
                    )
                report("edit_file (read-checked write)", samples)
                report(
                    "bash true (sandbox off)",
                    await timed(registry, ctx, "bash", {"command": "true"}, 50),
                )
            elif bwrap_available():
                report(
                    "bash true (bubblewrap)",
                    await timed(registry, ctx, "bash", {"command": "true"}, 50),
                )
            else:
                print("bash true (bubblewrap)             skipped: bwrap not available")


if __name__ == "__main__":
    anyio.run(main)
