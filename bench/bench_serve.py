"""``reasonix serve``: the app's first paint in a browser, and one served session's memory
beside the terminal app's (docs/PERFORMANCE.md, "reasonix serve").

    .venv/bin/python bench/bench_serve.py [--runs 5]

Two servers side by side, opened in turn: the app started when its websocket opens
(before) and pre-spawned when its signed-in page is requested (after), each with a
fresh browser profile (nothing cached). Phase timestamps inside the page show where
the time goes.

Needs Debian's chromium and chromium-driver (scripts/test installs them) and the
serve extra. Against the loopback fixture model, in a throwaway home and folder.
First paint, two ways: seen by the driver (from ``driver.get(URL)``, the token exchange
included, until polling finds the page's ``body.-first-byte`` mark; the polls wait for
the page's busy main thread, so this runs late), and in the page (the navigation's start
plus the animation frame after the one in which xterm drew the first frame). Memory: the resident set
(VmRSS) of the app process once it shows its prompt, served vs. in a pty.
"""

from __future__ import annotations

import argparse
import os
import pty
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from reasonix_testkit import ChatDialect, FixtureServer  # noqa: E402
from reasonix_testkit.serve import demo_responder  # noqa: E402

KEY_ENV, KEY = "REASONIX_BENCH_KEY", "sk-bench"


def _rss_kb(pid: int) -> int:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1])
    return 0


def _children(pid: int) -> list[int]:
    out = []
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                stat = Path(f"/proc/{entry}/stat").read_text()
            except OSError:
                continue
            if int(stat.rsplit(")", 1)[1].split()[1]) == pid:
                out.append(int(entry))
    return out


def _settle(pid: int, seconds: float = 4.0) -> int:
    """The app's RSS once it has been idle a moment (its prompt is up)."""
    time.sleep(seconds)
    return _rss_kb(pid)


def terminal(env: dict[str, str], folder: Path) -> tuple[float, float, int]:
    """The app in a pty: seconds to its first byte and to its prompt, and its RSS."""
    start = time.perf_counter()
    pid, fd = pty.fork()
    if pid == 0:
        os.chdir(folder)
        os.execve(sys.executable, [sys.executable, "-m", "reasonix_tui"], env)
    deadline = time.monotonic() + 60
    seen = b""
    first = 0.0
    while b"Ask Reasonix" not in re.sub(rb"\x1b\[[0-9;?]*[A-Za-z]", b"", seen):
        if time.monotonic() > deadline:
            break
        try:
            seen += os.read(fd, 65536)
        except OSError:
            break
        first = first or time.perf_counter() - start
    prompt = time.perf_counter() - start
    rss = _settle(pid)
    os.kill(pid, signal.SIGKILL)
    os.waitpid(pid, 0)
    os.close(fd)
    return first, prompt, rss


_RECORD_FRAMES = """
window.__screen = "";
window.__t = {};
const Native = window.WebSocket;
window.WebSocket = function (...args) {
  window.__t.ws_new = performance.now();
  const socket = new Native(...args);
  const decoder = new TextDecoder();
  socket.addEventListener("open", () => { window.__t.ws_open = performance.now(); });
  socket.addEventListener("message", async (event) => {
    const data = event.data instanceof Blob ? await event.data.arrayBuffer() : event.data;
    if (typeof data !== "string" && data.byteLength > 10 && !window.__t.first_frame) {
      window.__t.first_frame = performance.now();
      // xterm draws on the next animation frame: the one after it has been painted.
      requestAnimationFrame(() => requestAnimationFrame(() => {
        window.__t.painted = performance.now();
      }));
    }
    window.__screen += typeof data === "string" ? data : decoder.decode(data);
  });
  return socket;
};
window.WebSocket.prototype = Native.prototype;
"""

# Milestones inside the page, in ms from the navigation's start (the token URL's
# request, its redirect included; "navigation" is when that started after driver.get
# was called): the page's HTML, textual.js, window.onload (when
# textual-serve's script opens the websocket), the websocket, its first frame.
_PHASES = """
const nav = performance.getEntriesByType("navigation")[0];
const js = performance.getEntriesByType("resource").find(e => e.name.endsWith("textual.js"));
return {origin: performance.timeOrigin, page: nav.responseEnd, js: js ? js.responseEnd : -1,
        onload: nav.loadEventStart, ...window.__t};
"""
PHASES = ("navigation", "page", "js", "onload", "ws_new", "ws_open", "first_frame", "painted")

# The server with pre-spawn on or off (the only difference between the two), so that
# one run can interleave them.
_SERVER = """
import sys
from pathlib import Path
from reasonix_tui.serve.server import ReasonixServer, ServeOptions, app_argv, bind_socket
sock = bind_socket("127.0.0.1", 0)
options = ServeOptions(host="127.0.0.1", port=sock.getsockname()[1], auth="token",
                       folder=Path.cwd(), app_argv=app_argv(), prespawn=sys.argv[1] == "1")
ReasonixServer(options, on_ready=lambda url: print(url, flush=True)).run(sock)
"""


@dataclass
class Variant:
    name: str
    process: subprocess.Popen[str]
    url: str
    paints: list[float] = field(default_factory=list)
    prompts: list[float] = field(default_factory=list)
    phases: list[dict[str, float]] = field(default_factory=list)
    rss: int = 0
    server_rss: int = 0


def _start_server(env: dict[str, str], folder: Path, prespawn: bool) -> Variant:
    process = subprocess.Popen(
        [sys.executable, "-c", _SERVER, "1" if prespawn else "0"],
        cwd=folder, env=env, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True,
    )  # fmt: skip
    assert process.stdout is not None
    url = re.search(r"http://\S+", process.stdout.readline()).group(0)  # type: ignore[union-attr]
    return Variant("pre-spawn" if prespawn else "at websocket", process, url)


def _open_once(variant: Variant, options: object, measure_rss: bool) -> None:
    from selenium import webdriver
    from selenium.webdriver.chrome.service import Service
    from selenium.webdriver.common.by import By

    driver = webdriver.Chrome(service=Service(shutil.which("chromedriver")), options=options)  # type: ignore[arg-type]
    driver.execute_cdp_cmd("Page.addScriptToEvaluateOnNewDocument", {"source": _RECORD_FRAMES})
    try:
        start, epoch = time.perf_counter(), time.time()
        driver.get(variant.url)
        while "-first-byte" not in (
            driver.find_element(By.TAG_NAME, "body").get_attribute("class") or ""
        ):
            time.sleep(0.01)
        variant.paints.append(time.perf_counter() - start)
        while "Ask Reasonix" not in re.sub(
            r"\x1b\[[0-9;?]*[A-Za-z]", "", driver.execute_script("return window.__screen")
        ):
            time.sleep(0.01)
        variant.prompts.append(time.perf_counter() - start)
        phases = driver.execute_script(_PHASES)
        phases["navigation"] = phases.pop("origin") - epoch * 1000
        variant.phases.append(phases)
        if measure_rss:
            apps = _children(variant.process.pid)
            variant.rss = max(variant.rss, sum(_settle(p) for p in apps[:1]))
            variant.server_rss = _rss_kb(variant.process.pid)
    finally:
        driver.quit()
    time.sleep(1)


def served(env: dict[str, str], folder: Path, runs: int) -> list[Variant]:
    """Both servers side by side, opened in turn (before, after, before, ...)."""
    from selenium import webdriver

    options = webdriver.ChromeOptions()
    options.binary_location = shutil.which("chromium") or ""
    for flag in ("--headless=new", "--no-sandbox", "--disable-gpu", "--window-size=1200,800"):
        options.add_argument(flag)
    variants = [_start_server(env, folder, False), _start_server(env, folder, True)]
    try:
        for run in range(runs):
            for variant in variants:
                _open_once(variant, options, measure_rss=run == 0)
    finally:
        for variant in variants:
            variant.process.send_signal(signal.SIGINT)
            variant.process.wait(60)
    return variants


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--runs", type=int, default=5)
    args = parser.parse_args()
    with (
        tempfile.TemporaryDirectory() as tmp,
        FixtureServer(ChatDialect("deepseek"), api_key=KEY) as fixture,
    ):
        fixture.responder = demo_responder
        home, folder = Path(tmp) / "home", Path(tmp) / "ws"
        home.mkdir()
        folder.mkdir()
        (home / "config.toml").write_text(
            f'[[providers]]\nname = "fixture"\nkind = "openai"\nbase_url = "{fixture.base_url}"\n'
            f'models = ["deepseek-flash"]\ndefault = "deepseek-flash"\napi_key_env = "{KEY_ENV}"\n'
            'reasoning_protocol = "deepseek"\n',
            encoding="utf-8",
        )
        env = {**os.environ, "REASONIX_HOME": str(home), KEY_ENV: KEY, "TERM": "xterm-256color"}
        load_before = os.getloadavg()[0]
        variants = served(env, folder, args.runs)
        load_after = os.getloadavg()[0]
        terms = [terminal(env, folder) for _ in range(args.runs)]
    term_rss = max(t[2] for t in terms)

    def median(values: list[float]) -> float:
        return sorted(values)[len(values) // 2]

    print(
        f"load average (1 min): {load_before:.1f} before, {load_after:.1f} after the browser runs"
    )
    for v in variants:
        print(f"browser, app started {v.name}: first paint seen by the driver median "
              f"{median(v.paints):.2f} s (max {max(v.paints):.2f}), prompt shown median "
              f"{median(v.prompts):.2f} s; target <= 2 s ({len(v.paints)} runs)")  # fmt: skip
        steps = ", ".join(
            f"{k} {median([p.get(k, -1) for p in v.phases]) / 1000:.2f}" for k in PHASES
        )
        print(f"  phase medians, s from navigation start: {steps}")
        painted = sorted(round((p["navigation"] + p["painted"]) / 1000, 2) for p in v.phases)
        print(f"  first frame painted (in the page), s from driver.get, each run: {painted}")
    print(f"terminal, from exec: first byte median {median([t[0] for t in terms]):.2f} s, "
          f"prompt shown median {median([t[1] for t in terms]):.2f} s ({args.runs} runs each)")  # fmt: skip
    served_rss = variants[-1].rss
    print(f"app RSS: served {served_rss / 1024:.0f} MB, terminal {term_rss / 1024:.0f} MB, "
          f"ratio {served_rss / max(term_rss, 1):.2f}; the server process "
          f"{variants[-1].server_rss / 1024:.0f} MB")  # fmt: skip
    return 0


if __name__ == "__main__":
    sys.exit(main())
