"""SandboxPolicy path resolution and confinement, and the observation ledger."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from reasonix_core.tool.ledger import (
    FS_NOT_FOUND,
    FS_NOT_OBSERVED,
    FS_STALE_VERSION,
    FileLedger,
    read_version,
)
from reasonix_core.tool.sandbox import PathDenied, SandboxPolicy, is_within


@pytest.fixture
def layout(tmp_path: Path) -> tuple[Path, Path, Path]:
    ws = tmp_path / "ws"
    tmp = tmp_path / "sess-tmp"
    outside = tmp_path / "outside"
    for d in (ws, tmp, outside):
        d.mkdir()
    (ws / "src").mkdir()
    (ws / "src" / "a.py").write_text("a\n")
    (outside / "secret.txt").write_text("s\n")
    return ws, tmp, outside


def policy(ws: Path, tmp: Path, **kw: object) -> SandboxPolicy:
    return SandboxPolicy(workspace=ws, temp_dir=tmp, **kw)  # type: ignore[arg-type]


# -- resolve ---------------------------------------------------------------------------


def test_resolve_relative_is_relative_to_workspace(layout: tuple[Path, Path, Path]) -> None:
    ws, tmp, _ = layout
    p = policy(ws, tmp)
    assert p.resolve("src/a.py") == ws.resolve() / "src" / "a.py"
    assert p.resolve(".") == ws.resolve()
    assert p.resolve("src/../src/./a.py") == ws.resolve() / "src" / "a.py"


def test_resolve_absolute_and_home(layout: tuple[Path, Path, Path]) -> None:
    ws, tmp, outside = layout
    p = policy(ws, tmp)
    assert p.resolve(str(outside / "secret.txt")) == outside.resolve() / "secret.txt"
    home = Path(os.path.expanduser("~"))
    assert p.resolve("~/notes.txt") == Path(os.path.realpath(home)) / "notes.txt"


def test_resolve_nonexistent_resolves_deepest_existing_ancestor(
    layout: tuple[Path, Path, Path],
) -> None:
    ws, tmp, outside = layout
    (ws / "link").symlink_to(outside, target_is_directory=True)
    p = policy(ws, tmp)
    assert p.resolve("new/dir/x.txt") == ws.resolve() / "new" / "dir" / "x.txt"
    # The symlinked ancestor exists and is resolved; the missing rest is appended.
    assert p.resolve("link/new/x.txt") == outside.resolve() / "new" / "x.txt"
    # `..` after a missing component is lexical.
    assert p.resolve("nope/../src/a.py") == ws.resolve() / "src" / "a.py"


def test_resolve_follows_symlinks_and_dangling_links(layout: tuple[Path, Path, Path]) -> None:
    ws, tmp, outside = layout
    (ws / "alias.py").symlink_to(ws / "src" / "a.py")
    (ws / "dangling").symlink_to(outside / "not-yet.txt")
    p = policy(ws, tmp)
    assert p.resolve("alias.py") == ws.resolve() / "src" / "a.py"
    assert p.resolve("dangling") == outside.resolve() / "not-yet.txt"
    # Not following the last component keeps the link itself.
    assert p.resolve("alias.py", follow_symlinks=False) == ws.resolve() / "alias.py"


@pytest.mark.parametrize("bad", ["", "   ", "a\x00b", "\ud800x", "a\udc80b"])
def test_resolve_rejects_unusable_strings(layout: tuple[Path, Path, Path], bad: str) -> None:
    ws, tmp, _ = layout
    with pytest.raises(PathDenied):
        policy(ws, tmp).resolve(bad)


# -- check_write -----------------------------------------------------------------------


def test_check_write_allows_workspace_temp_and_allow_write(
    layout: tuple[Path, Path, Path],
) -> None:
    ws, tmp, outside = layout
    extra = outside / "extra"
    extra.mkdir()
    p = policy(ws, tmp, allow_write=(extra,))
    assert p.check_write("src/new.py") == ws.resolve() / "src" / "new.py"
    assert p.check_write(str(tmp / "scratch.txt")) == tmp.resolve() / "scratch.txt"
    assert p.check_write(str(extra / "ok.txt")) == extra.resolve() / "ok.txt"
    assert p.check_write(".") == ws.resolve()


@pytest.mark.parametrize(
    "escape",
    ["../outside/secret.txt", "src/../../outside/x", "/etc/passwd", "~/x.txt", "link/x.txt"],
)
def test_check_write_refuses_escapes(layout: tuple[Path, Path, Path], escape: str) -> None:
    ws, tmp, outside = layout
    (ws / "link").symlink_to(outside, target_is_directory=True)
    with pytest.raises(PathDenied) as info:
        policy(ws, tmp).check_write(escape)
    message = str(info.value)
    assert "outside the writable roots" in message
    assert escape in message


def test_check_write_refuses_symlink_file_pointing_outside(
    layout: tuple[Path, Path, Path],
) -> None:
    ws, tmp, outside = layout
    (ws / "evil.txt").symlink_to(outside / "secret.txt")
    with pytest.raises(PathDenied):
        policy(ws, tmp).check_write("evil.txt")
    # The link itself (not followed) lives in the workspace.
    assert policy(ws, tmp).check_write("evil.txt", follow_symlinks=False) == (
        ws.resolve() / "evil.txt"
    )


def test_check_write_with_symlinked_workspace(tmp_path: Path) -> None:
    real = tmp_path / "real-ws"
    real.mkdir()
    alias = tmp_path / "ws-alias"
    alias.symlink_to(real, target_is_directory=True)
    p = SandboxPolicy(workspace=alias, temp_dir=tmp_path / "t")
    assert p.check_write("a.txt") == real.resolve() / "a.txt"
    assert p.display(real.resolve() / "a.txt") == "a.txt"


def test_sibling_with_common_prefix_is_outside(tmp_path: Path) -> None:
    ws = tmp_path / "ws"
    ws.mkdir()
    (tmp_path / "ws-evil").mkdir()
    with pytest.raises(PathDenied):
        SandboxPolicy(workspace=ws, temp_dir=tmp_path / "t").check_write("../ws-evil/x")


# -- check_read / is_hidden ------------------------------------------------------------------


def test_check_read_and_is_hidden(layout: tuple[Path, Path, Path]) -> None:
    ws, tmp, outside = layout
    (ws / ".env").write_text("KEY=1\n")
    (ws / "secrets").mkdir()
    (ws / "secrets" / "k.pem").write_text("k")
    (ws / "env-alias").symlink_to(ws / ".env")
    p = policy(ws, tmp, forbid_read=(Path(".env"), ws / "secrets"))
    with pytest.raises(PathDenied, match="forbid_read"):
        p.check_read(".env")
    with pytest.raises(PathDenied):
        p.check_read("secrets/k.pem")
    with pytest.raises(PathDenied):
        p.check_read("env-alias")  # an alias resolves to the hidden file
    assert p.check_read("src/a.py") == ws.resolve() / "src" / "a.py"
    # Reading outside the workspace is allowed unless forbidden.
    assert p.check_read(str(outside / "secret.txt")) == outside.resolve() / "secret.txt"
    assert p.is_hidden(ws / ".env")
    assert p.is_hidden(ws / "secrets" / "k.pem")
    assert p.is_hidden(ws / "env-alias")
    assert not p.is_hidden(ws / "src" / "a.py")
    assert not p.is_hidden(ws / "secrets-not")


def test_is_hidden_keeps_undecodable_names_from_a_listing(
    layout: tuple[Path, Path, Path],
) -> None:
    ws, tmp, outside = layout
    name = os.fsdecode(b"bad\xffname")  # an undecodable byte becomes a surrogate
    (ws / name).symlink_to("src")
    (ws / "leak").symlink_to(outside)
    p = policy(ws, tmp, forbid_read=(outside,))
    assert not p.is_hidden(ws / name)
    assert p.is_hidden(ws / "leak")
    with pytest.raises(PathDenied, match="surrogate"):
        p.resolve(name)  # the same text typed as a tool argument is refused


def test_display_and_is_within(layout: tuple[Path, Path, Path]) -> None:
    ws, tmp, outside = layout
    p = policy(ws, tmp)
    assert p.display(ws.resolve() / "src" / "a.py") == "src/a.py"
    assert p.display(ws.resolve()) == "."
    assert p.display(outside.resolve()) == str(outside.resolve())
    assert is_within(Path("/a/b"), Path("/a"))
    assert not is_within(Path("/ab"), Path("/a"))


def test_write_roots_property_unchanged(layout: tuple[Path, Path, Path]) -> None:
    ws, tmp, outside = layout
    p = policy(ws, tmp, allow_write=(outside,))
    assert p.write_roots == (ws, tmp, outside)


# -- ledger -----------------------------------------------------------------------------------


def test_ledger_codes(tmp_path: Path) -> None:
    f = tmp_path / "f.txt"
    ledger = FileLedger()
    assert ledger.check(f) == FS_NOT_FOUND
    f.write_text("hello")
    assert ledger.check(f) == FS_NOT_OBSERVED
    version = ledger.observe(f)
    assert version is not None and version.size == 5
    assert ledger.check(f) is None
    f.write_text("world")
    assert ledger.check(f) == FS_STALE_VERSION
    f.unlink()
    assert ledger.check(f) == FS_NOT_FOUND
    assert ledger.observe(f) is None
    assert f not in ledger


def test_ledger_same_size_restored_mtime_is_stale(tmp_path: Path) -> None:
    f = tmp_path / "f.txt"
    f.write_text("aaaa")
    ledger = FileLedger()
    ledger.observe(f)
    st = f.stat()
    f.write_text("bbbb")
    os.utime(f, ns=(st.st_atime_ns, st.st_mtime_ns))
    after = read_version(f)
    assert after is not None and after.size == 4 and after.mtime_ns == st.st_mtime_ns
    assert ledger.check(f) == FS_STALE_VERSION


def test_ledger_keys_aliases_and_moves(tmp_path: Path) -> None:
    f = tmp_path / "f.txt"
    f.write_text("x")
    (tmp_path / "alias").symlink_to(f)
    ledger = FileLedger()
    ledger.observe(tmp_path / "alias")
    assert ledger.check(f) is None
    assert ledger.lock(f) is ledger.lock(tmp_path / "alias")
    d = tmp_path / "d"
    d.mkdir()
    (d / "g.txt").write_text("g")
    ledger.observe(d / "g.txt")
    os.rename(d, tmp_path / "e")
    ledger.move(d, tmp_path / "e")
    assert ledger.check(tmp_path / "e" / "g.txt") is None
    os.rename(f, tmp_path / "f2.txt")
    ledger.move(f, tmp_path / "f2.txt")
    assert ledger.check(tmp_path / "f2.txt") is None
