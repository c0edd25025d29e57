"""``reasonix serve`` in a real browser: headless Debian chromium driven by selenium.

Skipped (with the reason) when chromium or chromium-driver is not installed;
``scripts/test`` installs them when it runs as root with apt."""

from __future__ import annotations

import re
import shutil
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from reasonix_testkit.serve import demo_responder
from tests.tui.serve_helpers import Served, start_serve, wait_for

pytestmark = pytest.mark.slow

CHROMIUM = shutil.which("chromium")
DRIVER = shutil.which("chromedriver")
if CHROMIUM is None or DRIVER is None:
    pytest.skip(
        "needs Debian's chromium and chromium-driver (scripts/test installs them as root)",
        allow_module_level=True,
    )

from selenium import webdriver  # noqa: E402
from selenium.webdriver.chrome.service import Service  # noqa: E402
from selenium.webdriver.common.by import By  # noqa: E402

_RECORD_FRAMES = """
window.__screen = "";
const Native = window.WebSocket;
window.WebSocket = function (...args) {
  const socket = new Native(...args);
  const decoder = new TextDecoder();
  socket.addEventListener("message", async (event) => {
    const data = event.data instanceof Blob ? await event.data.arrayBuffer() : event.data;
    window.__screen += typeof data === "string" ? data : decoder.decode(data);
  });
  return socket;
};
window.WebSocket.prototype = Native.prototype;
"""


def _screen(browser: webdriver.Chrome) -> str:
    text = browser.execute_script("return window.__screen || ''")
    return re.sub(r"\x1b\[[0-9;?]*[A-Za-z]", "", str(text))


@pytest.fixture
def browser() -> Iterator[webdriver.Chrome]:
    options = webdriver.ChromeOptions()
    options.binary_location = CHROMIUM or ""
    for flag in ("--headless=new", "--no-sandbox", "--disable-gpu", "--window-size=1200,800",
                 "--disable-dev-shm-usage"):  # fmt: skip
        options.add_argument(flag)
    driver = webdriver.Chrome(service=Service(DRIVER or ""), options=options)
    # The terminal draws on a canvas: keep what the websocket brings, as text, to read
    # the screen the browser was sent.
    driver.execute_cdp_cmd("Page.addScriptToEvaluateOnNewDocument", {"source": _RECORD_FRAMES})
    yield driver
    driver.quit()


@pytest.fixture
def served(workspace: Path, configured: object) -> Iterator[Served]:
    configured.responder = demo_responder  # type: ignore[attr-defined]
    server = start_serve(workspace)
    yield server
    server.stop()


def _prompts(configured: object) -> str:
    return " ".join(str(r.json) for r in configured.requests)  # type: ignore[attr-defined]


def _type_until_answered(browser: webdriver.Chrome, configured: object, prompt: str) -> None:
    """Type into the terminal until the model receives the prompt (keys typed while
    the app still starts are dropped, as in a terminal)."""
    end = time.monotonic() + 90
    while prompt not in _prompts(configured):
        assert time.monotonic() < end, "the prompt never reached the model"
        area = browser.find_element(By.CSS_SELECTOR, ".xterm-helper-textarea")
        area.send_keys(prompt + "\n")
        try:
            wait_for(lambda: prompt in _prompts(configured), "the prompt", deadline=5)
        except AssertionError:
            continue


def test_browser_types_a_prompt_and_the_model_answers(
    browser: webdriver.Chrome, served: Served, configured: object
) -> None:
    browser.get(served.url)
    # The token was exchanged for a cookie and left the address bar.
    assert "token=" not in browser.current_url
    cookie = browser.get_cookie(f"reasonix_serve_{served.port}")
    assert cookie is not None and cookie["httpOnly"] and cookie["sameSite"] == "Strict"
    wait_for(lambda: "-first-byte" in (browser.find_element(By.TAG_NAME, "body")
                                       .get_attribute("class") or ""), "the app's first paint")  # fmt: skip
    _type_until_answered(browser, configured, "hello from the browser")
    wait_for(lambda: "You said: hello from the browser" in _screen(browser), "the answer")
    assert len(served.apps()) == 1


def test_without_the_token_typing_reaches_nothing(
    browser: webdriver.Chrome, served: Served, configured: object
) -> None:
    browser.get(served.base + "/")
    assert "sign in first" in browser.find_element(By.TAG_NAME, "body").text
    assert browser.find_elements(By.CSS_SELECTOR, ".xterm-helper-textarea") == []
    browser.find_element(By.TAG_NAME, "body").send_keys("hello from a stranger\n")
    # The page is a plain-text refusal: nothing in it opens a websocket.
    assert _screen(browser) == ""
    assert served.apps() == []
    assert configured.requests == []  # type: ignore[attr-defined]
