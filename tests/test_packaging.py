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


@pytest.mark.slow
def test_the_wheel_contains_no_test_code(tmp_path: Path) -> None:
    if importlib.util.find_spec("setuptools.build_meta") is None:
        pytest.fail("setuptools (the build backend) is missing: install the `test` extra")
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
    (wheel,) = out.glob("reasonix-*.whl")
    with zipfile.ZipFile(wheel) as archive:
        names = archive.namelist()
    shipped = [n for n in names if ".dist-info/" not in n]
    assert {n.split("/")[0] for n in shipped} == PRODUCT
    assert [n for n in shipped if _test_code(n)] == []
    # The product is really in there (not an empty wheel that passes vacuously).
    assert "reasonix_core/agent/loop.py" in names
    assert "reasonix_tui/cli.py" in names
