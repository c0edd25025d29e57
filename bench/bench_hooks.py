"""What hooks cost (docs/HOOKS.md): reading the settings files at session start, and
one hook run per tool call, side by side with not having them.

    .venv/bin/python bench/bench_hooks.py [--runs N]

Prints medians in milliseconds and the ratios, measured in one run; nothing here
calls a model.
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

import anyio

ROOT = Path(__file__).resolve().parent.parent
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from reasonix_core.hooks.engine import Hooks  # noqa: E402
from reasonix_core.hooks.settings import HookSpec, LoadedSettings, load_settings  # noqa: E402


def _median_ms(fn: Callable[[], object], runs: int) -> float:
    samples = []
    for _ in range(runs):
        start = time.perf_counter()
        fn()
        samples.append((time.perf_counter() - start) * 1000)
    return statistics.median(samples)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--runs", type=int, default=30)
    runs = parser.parse_args().runs
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        bare, configured, home = root / "bare", root / "configured", root / "home"
        for folder in (bare, configured, home):
            folder.mkdir()
        hooks = {
            "PreToolUse": [{"matcher": "Bash", "hooks": [{"type": "command", "command": "true"}]}]
        }
        for name in (
            ".claude/settings.json",
            ".claude/settings.local.json",
            ".reasonix/settings.json",
        ):
            path = configured / name
            path.parent.mkdir(exist_ok=True)
            path.write_text(json.dumps({"hooks": hooks, "permissions": {"deny": ["Read(./.env)"]}}))
        no_files = _median_ms(lambda: load_settings(bare, home, claude_dir=root / "none"), runs)
        three = _median_ms(
            lambda: load_settings(configured, home, trust_project=True, claude_dir=root / "none"),
            runs,
        )
        spec = HookSpec("PreToolUse", "Bash", "true", 60, "bench")
        one = Hooks(LoadedSettings(hooks=(spec,)), workspace=bare)
        four = Hooks(LoadedSettings(hooks=(spec,) * 4), workspace=bare)
        none = Hooks(LoadedSettings(), workspace=bare)
        fields = {"tool_name": "Bash", "tool_input": {"command": "ls"}}

        def fire(h: Hooks) -> Callable[[], object]:
            return lambda: anyio.run(lambda: h.fire("PreToolUse", fields, subject=("Bash",)))

        unhooked = _median_ms(fire(none), runs)
        hooked = _median_ms(fire(one), runs)
        parallel = _median_ms(fire(four), runs)
    print(f"settings files: none {no_files:.2f} ms, three project files {three:.2f} ms")
    print(
        f"PreToolUse per call: no hook {unhooked:.2f} ms, one `true` hook {hooked:.2f} ms, "
        f"four in parallel {parallel:.2f} ms (x{parallel / hooked:.2f} of one)"
    )


if __name__ == "__main__":
    main()
