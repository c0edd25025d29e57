"""Shared plumbing for the benchmark scripts (not a benchmark itself).

Every benchmark talks to the project's loopback fixture server
(``reasonix_testkit.FixtureServer``) through a throw-away
``REASONIX_HOME`` whose ``config.toml`` names the server as the only provider.
Nothing here touches the real ``~/.reasonix`` or a live API.
"""

from __future__ import annotations

import json
import math
import os
import statistics
import subprocess
import sys
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
# The test kit (``reasonix_testkit``) is not installed with the package; the
# scripts import it from the repository root. Every script imports this module
# before the kit.
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))
VENV_BIN = Path(sys.executable).parent
REASONIX_BIN = VENV_BIN / "reasonix"

KEY_ENV = "REASONIX_BENCH_KEY"
KEY = "sk-bench-0123456789"
MODEL = "deepseek-flash"


def config_toml(base_url: str, extra: str = "", bash: str = "off") -> str:
    return f"""
[[providers]]
name = "fixture"
kind = "openai"
base_url = "{base_url}"
models = ["deepseek-flash", "deepseek-v4-pro"]
default = "deepseek-flash"
api_key_env = "{KEY_ENV}"
context_window = 1000000
reasoning_protocol = "deepseek"

[agent]
retry_base_delay = 0.01
retry_max_delay = 0.05

[sandbox]
bash = "{bash}"
{extra}"""


def write_config(home: Path, base_url: str, extra: str = "", bash: str = "off") -> Path:
    home.mkdir(parents=True, exist_ok=True)
    path = home / "config.toml"
    path.write_text(config_toml(base_url, extra, bash), encoding="utf-8")
    return path


def bench_env(home: Path, pycache: Path | None = None) -> dict[str, str]:
    """The environment for a ``reasonix`` subprocess: isolated home, the fixture key.

    ``pycache``: a folder for compiled bytecode (``PYTHONPYCACHEPREFIX``), with
    ``PYTHONDONTWRITEBYTECODE`` removed, so project modules load from ``.pyc``
    as on any normal install without writing ``__pycache__`` into the tree.
    ``None`` keeps the caller's bytecode settings as they are.
    """
    env = {k: v for k, v in os.environ.items() if not k.endswith("_API_KEY")}
    env["REASONIX_HOME"] = str(home)
    env[KEY_ENV] = KEY
    env.pop("PYTHONPROFILEIMPORTTIME", None)
    if pycache is not None:
        env.pop("PYTHONDONTWRITEBYTECODE", None)
        env["PYTHONPYCACHEPREFIX"] = str(pycache)
    return env


def use_env(home: Path) -> None:
    """Point this process at ``home`` (for benchmarks that drive the Agent in-process)."""
    for name in [k for k in os.environ if k.endswith("_API_KEY")]:
        del os.environ[name]
    os.environ["REASONIX_HOME"] = str(home)
    os.environ[KEY_ENV] = KEY


# --------------------------------------------------------------------------- a small project

_MODULE = '''"""{title}."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass
class {cls}:
    """A {noun} record kept by the inventory service."""

    name: str
    quantity: int = 0
    price_cents: int = 0

    def total_cents(self) -> int:
        return self.quantity * self.price_cents

    def restock(self, amount: int) -> None:
        if amount <= 0:
            raise ValueError("restock amount must be positive")
        self.quantity += amount


def parse_{fn}(line: str) -> {cls}:
    """Parse ``name,quantity,price`` into a {cls}."""
    name, quantity, price = (part.strip() for part in line.split(","))
    return {cls}(name=name, quantity=int(quantity), price_cents=int(price))


def total_value(items: list[{cls}]) -> int:
    # TODO: handle currency conversion
    return sum(item.total_cents() for item in items)
'''

_NOUNS = ("widget", "gadget", "sprocket", "bracket", "gear", "spring", "valve", "bolt")


def make_project(root: Path) -> list[str]:
    """A small Python project to read and search. Returns the relative file paths."""
    files: dict[str, str] = {
        "README.md": "# inventory\n\nA tiny inventory service used by the benchmarks.\n\n"
        "Run `python -m inventory` to print the stock value.\n",
        "pyproject.toml": '[project]\nname = "inventory"\nversion = "0.1.0"\n'
        'requires-python = ">=3.11"\n',
        "inventory/__init__.py": '"""The inventory package."""\n\n__version__ = "0.1.0"\n',
        "inventory/__main__.py": "from inventory.widget import total_value\n\n"
        "print(total_value([]))\n",
        "tests/test_widget.py": "from inventory.widget import parse_widget\n\n\n"
        "def test_parse():\n    assert parse_widget('a, 2, 3').total_cents() == 6\n",
    }
    for noun in _NOUNS:
        files[f"inventory/{noun}.py"] = _MODULE.format(
            title=f"{noun.title()} records", cls=noun.title(), noun=noun, fn=noun
        )
    for rel, text in files.items():
        path = root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
    return sorted(files)


# --------------------------------------------------------------------------- helpers


def assistant_turns(body: dict[str, Any] | None) -> int:
    """How many assistant messages a request carries = how many steps came before it."""
    if not body:
        return 0
    return sum(1 for m in body.get("messages") or () if m.get("role") == "assistant")


def percentile(values: Sequence[float], q: float) -> float:
    """Nearest-rank percentile (q in 0..100)."""
    ordered = sorted(values)
    if not ordered:
        return math.nan
    rank = max(1, math.ceil(q / 100 * len(ordered)))
    return ordered[rank - 1]


def summary_ms(values: Sequence[float]) -> str:
    ms = [v * 1000 for v in values]
    return (
        f"median {statistics.median(ms):7.1f} ms   p90 {percentile(ms, 90):7.1f} ms   "
        f"min {min(ms):7.1f} ms   max {max(ms):7.1f} ms   (n={len(ms)})"
    )


def verdict(value: float, target: float, *, higher_is_better: bool = False) -> str:
    ok = value >= target if higher_is_better else value <= target
    return "MET" if ok else "MISSED"


def dumps(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False, separators=(",", ":"))


# --------------------------------------------------------------------------- scripted "models"


def tool_loop_responder(steps: int, delay: float = 0.0, tool: str = "files") -> Any:
    """An instant model: ``steps - 1`` cheap tool calls, then a final answer.

    ``tool``: ``"files"`` alternates a ``read_file`` and an ``ls`` (read-only);
    ``"bash"`` runs ``bash true`` on every step. The step is derived from the
    request itself (assistant messages so far), so replaying a recorded request
    body gets exactly the same reply. ``delay``: seconds between the stream's data
    events (a model that takes its time).
    """
    from reasonix_testkit import RecordedRequest, Reply, ToolCallSpec

    def responder(request: RecordedRequest) -> Reply:
        step = assistant_turns(request.json) + 1
        if step >= steps:
            return Reply(reasoning="All done.", content="Done: the file says hello.", delay=delay)
        if tool == "bash":
            call = ToolCallSpec("bash", '{"command":"true"}')
        elif step % 2:
            call = ToolCallSpec("read_file", '{"path":"tiny.txt"}')
        else:
            call = ToolCallSpec("ls", '{"path":"."}')
        return Reply(reasoning=f"Step {step}: look again.", tool_calls=[call], delay=delay)

    return responder


@contextmanager
def tool_loop_server(
    mode: str, steps: int, delay: float = 0.0, *, keep_alive: bool = False, tool: str = "files"
) -> Iterator[str]:
    """A fresh fixture server (fresh prompt cache) serving the tool loop of
    ``tool_loop_responder`` (``tool``: which tool it calls), in a thread or in its own process (``_serve.py``, so the
    server's work does not share the interpreter with what is measured); yields its
    base URL. ``keep_alive``: streamed answers keep their connection open for the
    next request, as a real API's do (the fixture closes it by default)."""
    from reasonix_testkit import ChatDialect, FixtureServer

    if mode == "thread":
        with FixtureServer(
            ChatDialect("deepseek"), api_key=None, keep_alive_streams=keep_alive
        ) as server:
            server.responder = tool_loop_responder(steps, delay, tool)
            yield server.base_url
        return
    proc = subprocess.Popen(
        [
            sys.executable,
            str(Path(__file__).resolve().parent / "_serve.py"),
            str(steps),
            str(delay),
            "keep-alive" if keep_alive else "close",
            tool,
        ],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
    )
    try:
        assert proc.stdout is not None
        url = proc.stdout.readline().strip()
        if not url.startswith("http"):
            raise SystemExit("the fixture server process did not start")
        yield url
    finally:
        assert proc.stdin is not None
        proc.stdin.close()
        proc.wait(timeout=10)
