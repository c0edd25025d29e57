"""What ``pip install reasonix`` ships: the product, never the test kit.

The fixture servers and the scripted TUI services live in ``reasonix_testkit/``
at the repository root; only ``reasonix_core`` and ``reasonix_tui`` belong in
the wheel. One test builds the real wheel (offline: no build isolation, the
backend comes with the ``test`` extra; about 2 s), one checks the package list
setuptools discovers from pyproject's configuration.
"""

from __future__ import annotations

import importlib.util
import shutil
import subprocess
import sys
import tomllib
import zipfile
from pathlib import Path

import pytest
from setuptools import find_namespace_packages

ROOT = Path(__file__).resolve().parent.parent
PRODUCT = {"reasonix_core", "reasonix_tui"}


def _test_code(path: str) -> bool:
    """A path of test code: the kit, a ``testing`` module, a fixture server, a test."""
    for part in path.split("/"):
        stem = part.removesuffix(".py")
        if stem in ("reasonix_testkit", "testing", "conftest") or stem.startswith("test_"):
            return True
        if "fixture" in stem:
            return True
    return False


def test_the_test_kit_is_where_tests_import_it_from() -> None:
    # A guard on the guard: the kit exists, so its absence from the wheel means something.
    spec = importlib.util.find_spec("reasonix_testkit")
    assert spec is not None and spec.origin is not None
    assert Path(spec.origin).parent == ROOT / "reasonix_testkit"
    assert importlib.util.find_spec("reasonix_core.testing") is None
    assert importlib.util.find_spec("reasonix_tui.testing") is None


def test_package_discovery_ships_only_the_product() -> None:
    config = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))
    find = config["tool"]["setuptools"]["packages"]["find"]
    packages = find_namespace_packages(
        where=str(ROOT), include=find.get("include", ("*",)), exclude=find.get("exclude", ())
    )
    assert {p.split(".")[0] for p in packages} == PRODUCT
    assert [p for p in packages if _test_code(p.replace(".", "/"))] == []


def _copy_source(dest: Path) -> Path:
    """The working tree without build products, so the build starts clean.

    Dot directories (.git, .venv, caches) are not sources; build/ and egg-info
    from an earlier build must not leak into this one.
    """
    ignore = shutil.ignore_patterns(
        ".*", "build", "dist", "*.egg-info", "__pycache__", "node_modules"
    )
    shutil.copytree(ROOT, dest, ignore=ignore)
    return dest


@pytest.fixture(scope="module")
def wheel(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The wheel built from a clean copy of the tree (once for the module)."""
    if importlib.util.find_spec("setuptools.build_meta") is None:
        pytest.fail("setuptools (the build backend) is missing: install the `test` extra")
    tmp_path = tmp_path_factory.mktemp("build")
    source = _copy_source(tmp_path / "src")
    out = tmp_path / "wheel"
    build = subprocess.run(
        [
            sys.executable,
            "-m",
            "pip",
            "wheel",
            "--no-deps",
            "--no-build-isolation",
            "--no-index",
            "--quiet",
            "--wheel-dir",
            str(out),
            str(source),
        ],
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert build.returncode == 0, build.stdout + build.stderr
    (built,) = out.glob("reasonix-*.whl")
    return built


@pytest.mark.slow
def test_the_wheel_contains_no_test_code(wheel: Path) -> None:
    with zipfile.ZipFile(wheel) as archive:
        names = archive.namelist()
    shipped = [n for n in names if ".dist-info/" not in n]
    assert {n.split("/")[0] for n in shipped} == PRODUCT
    assert [n for n in shipped if _test_code(n)] == []
    # The product is really in there (not an empty wheel that passes vacuously).
    assert "reasonix_core/agent/loop.py" in names
    assert "reasonix_tui/cli.py" in names


@pytest.mark.slow
def test_the_wheel_declares_an_spdx_license_and_ships_the_license_file(wheel: Path) -> None:
    with zipfile.ZipFile(wheel) as archive:
        names = archive.namelist()
        (metadata,) = [n for n in names if n.endswith(".dist-info/METADATA")]
        text = archive.read(metadata).decode()
    assert "License-Expression: MIT" in text.splitlines()
    assert not [line for line in text.splitlines() if line.startswith("License: ")]
    assert any(n.endswith(".dist-info/licenses/LICENSE") for n in names)


def test_pyproject_bounds_its_build_backend() -> None:
    config = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))
    (backend,) = config["build-system"]["requires"]
    assert backend.startswith("setuptools>=77") and "<" in backend
    assert config["project"]["license"] == "MIT"
    assert (ROOT / "LICENSE").read_text().startswith("MIT License")


@pytest.mark.slow
def test_the_wheel_installs_in_a_clean_venv_and_runs(wheel: Path, tmp_path: Path) -> None:
    """pip in a fresh virtualenv (uv is not part of the test environment), offline:
    without its dependencies, which `--version` does not need, so nothing is fetched."""
    venv = tmp_path / "clean"
    subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True, timeout=120)
    bin_dir = venv / ("Scripts" if sys.platform == "win32" else "bin")
    install = subprocess.run(
        [
            str(bin_dir / "python"),
            "-m",
            "pip",
            "install",
            "--no-deps",
            "--no-index",
            "-q",
            str(wheel),
        ],
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert install.returncode == 0, install.stdout + install.stderr
    from reasonix_core import __version__

    shown = subprocess.run(
        [str(bin_dir / "reasonix"), "--version"],
        capture_output=True,
        text=True,
        timeout=60,
        cwd=tmp_path,
    )
    assert shown.returncode == 0, shown.stderr
    assert shown.stdout.strip() == f"reasonix {__version__}"


# -- install footprint (docs/PERFORMANCE.md#install-footprint) -------------------------

#: What the MCP SDK installs for its server side (an ASGI server, a second web stack,
#: JWT and cryptography). Reasonix is only an MCP client, yet the SDK's client package
#: imports its server (``mcp.client`` -> the in-memory transport -> ``mcp.server``), and
#: no SDK release makes these an extra: they stay, and the footprint page says so.
MCP_SERVER_SIDE = ("uvicorn", "starlette", "sse-starlette", "python-multipart", "pyjwt")


def _unconditional(requirements: list[str]) -> set[str]:
    """Distribution names required without an extra (a marker on the platform or
    the Python version still counts as required)."""
    out = set()
    for line in requirements:
        name, _, marker = line.partition(";")
        if "extra ==" in marker:
            continue
        for stop in "[<>=!~ (":
            name = name.split(stop, 1)[0]
        out.add(name.strip().lower())
    return out


def test_the_mcp_sdk_still_requires_its_server_side() -> None:
    """A canary: the day an SDK release makes its server side optional, this fails,
    and the footprint can shrink (about 20 MB and 9 packages, measured)."""
    from importlib.metadata import requires

    required = _unconditional(requires("mcp") or [])
    still = [name for name in MCP_SERVER_SIDE if name in required]
    assert still == list(MCP_SERVER_SIDE), (
        f"the installed mcp SDK no longer requires {sorted(set(MCP_SERVER_SIDE) - set(still))}: "
        "depend on its client-only form and update docs/PERFORMANCE.md#install-footprint"
    )
