"""Config: layering, schema errors, model resolution, API keys and prices."""

from __future__ import annotations

import os
import stat
import subprocess
import sys
from datetime import UTC, datetime, timedelta, timezone
from pathlib import Path

import pytest

from reasonix_core.config import (
    Config,
    ProviderConfig,
    load_config,
    price_for,
    read_api_key,
    reasonix_home,
    resolve_model,
    save_api_key,
    secret_env_names,
)
from reasonix_core.config.prices import DEEPSEEK_PRICES_USD, is_peak
from reasonix_core.errors import ConfigError


@pytest.fixture
def home(tmp_path: Path) -> Path:
    path = tmp_path / "home"
    path.mkdir()
    return path


@pytest.fixture
def ws(tmp_path: Path) -> Path:
    path = tmp_path / "ws"
    path.mkdir()
    return path


@pytest.fixture(autouse=True)
def _clean_env(monkeypatch: pytest.MonkeyPatch) -> None:
    for name in ("REASONIX_HOME", "DEEPSEEK_API_KEY", "LOCAL_KEY", "OTHER_KEY"):
        monkeypatch.delenv(name, raising=False)


def write(path: Path, text: str) -> Path:
    path.write_text(text, encoding="utf-8")
    return path


# --- defaults ------------------------------------------------------------------


def test_defaults_with_no_files(home: Path, ws: Path) -> None:
    loaded = load_config(ws, home=home)
    assert loaded.sources == []
    cfg = loaded.config
    assert cfg.agent.compact_ratio == 0.80
    assert cfg.agent.effort == "auto"
    assert cfg.agent.retry_attempts == 4
    assert cfg.tools.bash_timeout_seconds == 120
    assert cfg.permissions.mode == "ask"
    assert cfg.sandbox.bash == "enforce"
    assert cfg.mcp is None and cfg.serve.auth_mode == "token"  # [serve] has its schema now
    [ds] = cfg.providers
    assert ds.name == "deepseek"
    assert ds.base_url == "https://api.deepseek.com"
    assert ds.models == ["deepseek-flash", "deepseek-v4-pro"]
    assert ds.default_model() == "deepseek-flash"
    assert ds.api_key_env == "DEEPSEEK_API_KEY"
    assert ds.context_window == 1048576
    assert ds.effective_reasoning_protocol() == "deepseek"
    assert ds.prices is not None
    flash = ds.prices["deepseek-flash"]
    assert (flash.cache_hit, flash.cache_miss, flash.output) == (0.003, 0.15, 0.60)
    pro = ds.prices["deepseek-v4-pro"]
    assert (pro.cache_hit, pro.cache_miss, pro.output) == (0.022, 0.66, 1.98)
    assert flash.currency == "USD"


def test_builtin_provider_replaced_when_user_configures_one(home: Path, ws: Path) -> None:
    write(home / "config.toml", '[[providers]]\nname = "local"\nmodel = "llama3"\n')
    cfg = load_config(ws, home=home).config
    assert [p.name for p in cfg.providers] == ["local"]


# --- precedence ------------------------------------------------------------------


def test_precedence_flag_over_project_over_user_over_default(home: Path, ws: Path) -> None:
    user = write(
        home / "config.toml",
        """
default_model = "user-model"
[agent]
effort = "low"
compact_ratio = 0.7
max_steps = 10
[tools]
bash_timeout_seconds = 60
[permissions]
deny = ["Bash(rm -rf*)"]
""",
    )
    project = write(
        ws / "reasonix.toml",
        """
default_model = "project-model"
[agent]
effort = "high"
[permissions]
allow = ["Bash(pytest:*)"]
""",
    )
    loaded = load_config(
        ws,
        home=home,
        overrides={"agent": {"effort": "max"}, "tools.bash_timeout_seconds": 5, "x": None},
        trust_project=True,
    )
    cfg = loaded.config
    assert loaded.sources == [user, project]
    assert cfg.agent.effort == "max"  # flag > project > user
    assert cfg.default_model == "project-model"  # project > user
    assert cfg.agent.compact_ratio == 0.7  # user > default (table merged, not replaced)
    assert cfg.agent.max_steps == 10
    assert cfg.tools.bash_timeout_seconds == 5  # dotted flag > user
    assert cfg.tools.mcp_call_timeout_seconds == 300  # default
    assert cfg.permissions.deny == ["Bash(rm -rf*)"]
    assert cfg.permissions.allow == ["Bash(pytest:*)"]
    assert cfg.agent.retry_attempts == 4  # default

    # Without the flag, the project wins.
    assert load_config(ws, home=home, trust_project=True).config.agent.effort == "high"
    # Without the project file, the user file wins.
    (ws / "reasonix.toml").unlink()
    only_user = load_config(ws, home=home, trust_project=True)
    assert only_user.config.agent.effort == "low"
    assert only_user.sources == [user]


def test_serve_is_user_only_and_mcp_passes_through(home: Path, ws: Path) -> None:
    write(home / "config.toml", '[serve]\nauth_mode = "password"\ntoken = "t"\n')
    write(ws / "reasonix.toml", '[serve]\nauth_mode = "none"\n[mcp]\nfoo = 1\n')
    loaded = load_config(ws, home=home, trust_project=True)
    # A project never sets [serve], trusted or not; the original's fixed token is set aside.
    assert loaded.config.serve.auth_mode == "password"
    assert loaded.config.serve.legacy == {"token": "t"}
    assert loaded.ignored == (
        f"{ws / 'reasonix.toml'}: [serve] is ignored: only the user's config.toml may set it",
    )
    assert loaded.config.mcp == {"foo": 1}


def test_providers_merge_by_name(home: Path, ws: Path) -> None:
    write(
        home / "config.toml",
        """
[[providers]]
name = "deepseek"
base_url = "https://api.deepseek.com"
models = ["deepseek-flash"]
api_key_env = "DEEPSEEK_API_KEY"

[[providers]]
name = "local"
base_url = "http://localhost:11434/v1"
models = ["llama3"]
""",
    )
    write(
        ws / "reasonix.toml",
        """
[[providers]]
name = "other"
base_url = "https://other.example/v1"
models = ["o1"]

[[providers]]
name = "deepseek"
base_url = "https://proxy.example/v1"
models = ["deepseek-v4-pro"]
""",
    )
    cfg = load_config(ws, home=home, trust_project=True).config
    assert [p.name for p in cfg.providers] == ["deepseek", "local", "other"]
    ds = cfg.providers[0]
    # Replaced whole, not merged key by key.
    assert ds.base_url == "https://proxy.example/v1"
    assert ds.models == ["deepseek-v4-pro"]
    assert ds.api_key_env == ""
    assert cfg.providers[1].models == ["llama3"]


def test_providers_override_from_flags_merge_by_name(home: Path, ws: Path) -> None:
    write(home / "config.toml", '[[providers]]\nname = "a"\nmodel = "m1"\n')
    cfg = load_config(ws, home=home, overrides={"providers": [{"name": "a", "model": "m2"}]}).config
    assert [(p.name, p.model) for p in cfg.providers] == [("a", "m2")]


def test_duplicate_provider_names_in_one_file(home: Path, ws: Path) -> None:
    project = write(
        ws / "reasonix.toml",
        '[[providers]]\nname = "a"\n[[providers]]\nname = "a"\n',
    )
    with pytest.raises(ConfigError) as info:
        load_config(ws, home=home, trust_project=True)
    assert str(project) in str(info.value)
    assert "duplicate provider name 'a' (providers[0] and providers[1])" in str(info.value)


def test_reasonix_home_override(tmp_path: Path, ws: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("HOME", str(tmp_path / "fakehome"))
    assert reasonix_home() == tmp_path / "fakehome" / ".reasonix"
    custom = tmp_path / "custom-home"
    custom.mkdir()
    monkeypatch.setenv("REASONIX_HOME", str(custom))
    assert reasonix_home() == custom
    user = write(custom / "config.toml", 'default_model = "from-env-home"\n')
    loaded = load_config(ws)
    assert loaded.config.default_model == "from-env-home"
    assert loaded.sources == [user]
    assert loaded.home == custom


# --- errors ----------------------------------------------------------------------


def test_malformed_toml_names_path_line_and_column(home: Path, ws: Path) -> None:
    project = write(ws / "reasonix.toml", '[agent]\neffort = "high"\ncompact_ratio = = 3\n')
    with pytest.raises(ConfigError) as info:
        load_config(ws, home=home)
    msg = str(info.value)
    assert msg.startswith(f"{project}:3:")
    assert "invalid TOML" in msg
    line, col = msg[len(str(project)) + 1 :].split(":")[:2]
    assert (int(line), int(col)) == (3, 17)


def test_malformed_toml_at_end_of_document(home: Path, ws: Path) -> None:
    user = write(home / "config.toml", 'default_model = "x"\n[agent')
    with pytest.raises(ConfigError) as info:
        load_config(ws, home=home)
    assert str(info.value).startswith(f"{user}:2:")


def test_invalid_utf8_is_config_error(home: Path, ws: Path) -> None:
    project = ws / "reasonix.toml"
    project.write_bytes(b'default_model = "ok"\nx = "\xff"\n')
    with pytest.raises(ConfigError) as info:
        load_config(ws, home=home)
    assert str(info.value).startswith(f"{project}:2:")


def test_unreadable_path_is_config_error(home: Path, ws: Path) -> None:
    (ws / "reasonix.toml").mkdir()
    with pytest.raises(ConfigError) as info:
        load_config(ws, home=home)
    assert str(ws / "reasonix.toml") in str(info.value)


def test_schema_error_names_file_and_key(home: Path, ws: Path) -> None:
    write(home / "config.toml", '[agent]\neffort = "high"\n')
    project = write(
        ws / "reasonix.toml",
        '[[providers]]\nname = "x"\nkind = 3\n',
    )
    with pytest.raises(ConfigError) as info:
        load_config(ws, home=home, trust_project=True)
    msg = str(info.value)
    assert str(project) in msg
    assert "providers[0].kind" in msg
    assert str(home / "config.toml") not in msg


def test_unknown_key_is_error_with_suggestion(home: Path, ws: Path) -> None:
    write(ws / "reasonix.toml", '[[providers]]\nname = "x"\nbase_ulr = "http://x"\n')
    with pytest.raises(ConfigError) as info:
        load_config(ws, home=home, trust_project=True)
    msg = str(info.value)
    assert "providers[0].base_ulr: unknown key" in msg
    assert "did you mean 'base_url'" in msg


def test_nested_key_path_and_value_in_message(home: Path, ws: Path) -> None:
    write(
        home / "config.toml",
        '[[providers]]\nname = "x"\n[providers.model_overrides."m-1"]\ncontext_window = "big"\n'
        '[permissions]\nmode = "maybe"\n',
    )
    with pytest.raises(ConfigError) as info:
        load_config(ws, home=home)
    msg = str(info.value)
    assert "providers[0].model_overrides.m-1.context_window" in msg
    assert "permissions.mode" in msg and "'maybe'" in msg


def test_missing_provider_name(home: Path, ws: Path) -> None:
    write(home / "config.toml", '[[providers]]\nkind = "openai"\n')
    with pytest.raises(ConfigError, match=r"providers\[0\]\.name: required key is missing"):
        load_config(ws, home=home)


def test_bad_override_names_overrides(home: Path, ws: Path) -> None:
    with pytest.raises(ConfigError, match=r"command-line overrides: agent\.retry_attempts"):
        load_config(ws, home=home, overrides={"agent.retry_attempts": 0})


@pytest.mark.parametrize("ratio", [0.30, 0.5, 0.85])
def test_compact_ratio_in_range(home: Path, ws: Path, ratio: float) -> None:
    write(ws / "reasonix.toml", f"[agent]\ncompact_ratio = {ratio}\n")
    assert load_config(ws, home=home).config.agent.compact_ratio == ratio


@pytest.mark.parametrize("ratio", [0.29, 0.86, 1, 0])
def test_compact_ratio_out_of_range(home: Path, ws: Path, ratio: float) -> None:
    project = write(ws / "reasonix.toml", f"[agent]\ncompact_ratio = {ratio}\n")
    with pytest.raises(ConfigError) as info:
        load_config(ws, home=home)
    msg = str(info.value)
    assert msg.startswith(f"{project}: agent.compact_ratio: ")
    assert "0.30" in msg and "0.85" in msg


def test_effort_validated(home: Path, ws: Path) -> None:
    write(ws / "reasonix.toml", '[agent]\neffort = "turbo"\n')
    with pytest.raises(ConfigError, match=r"agent\.effort: must be one of"):
        load_config(ws, home=home)


def test_legacy_keys_tolerated_and_readable(home: Path, ws: Path) -> None:
    write(
        home / "config.toml",
        """
config_version = 3
[ui]
theme = "dark"
[agent]
temperature = 0.0
reasoning_language = "zh"
soft_compact_ratio = 0.5
[[providers]]
name = "deepseek"
kind = "openai"
chat_url = "https://api.deepseek.com/chat/completions"
web_search = true
models = ["deepseek-flash"]
""",
    )
    cfg = load_config(ws, home=home).config
    assert cfg.legacy == {"config_version": 3, "ui": {"theme": "dark"}}
    assert cfg.agent.temperature == 0.0
    assert cfg.agent.reasoning_language == "zh"
    assert cfg.agent.legacy == {"soft_compact_ratio": 0.5}
    ds = cfg.providers[0]
    assert ds.request_url == "https://api.deepseek.com/chat/completions"
    assert ds.web_search is True


def test_sandbox_paths_expand(
    home: Path, ws: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("HOME", str(tmp_path / "u"))
    monkeypatch.setenv("SCRATCH", "/scratch")
    monkeypatch.delenv("UNSET_VAR", raising=False)
    write(
        ws / "reasonix.toml",
        '[sandbox]\nforbid_read = ["${HOME}/.ssh", "~/.aws"]\n'
        'allow_write = ["${SCRATCH}/x", "${UNSET_VAR:-/tmp}/y"]\n',
    )
    sb = load_config(ws, home=home, trust_project=True).config.sandbox
    assert sb.forbid_read == [f"{tmp_path}/u/.ssh", f"{tmp_path}/u/.aws"]
    assert sb.allow_write == ["/scratch/x", "/tmp/y"]


def test_sandbox_unset_variable_is_error(
    home: Path, ws: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("UNSET_VAR", raising=False)
    write(ws / "reasonix.toml", '[sandbox]\nforbid_read = ["${UNSET_VAR}/secret"]\n')
    with pytest.raises(ConfigError, match=r"sandbox\.forbid_read: environment variable UNSET_VAR"):
        load_config(ws, home=home)


# --- provider helpers ------------------------------------------------------------


def test_provider_model_helpers() -> None:
    p = ProviderConfig(
        name="gw",
        base_url="https://gateway.example/v1",
        models=["a", "b"],
        context_window=1000,
        max_output_tokens=100,
        model_overrides={"b": {"context_window": 5000, "max_output_tokens": -1}},
    )
    assert p.all_models() == ["a", "b"]
    assert p.default_model() == "a"
    assert p.context_window_for("a") == 1000
    assert p.context_window_for("b") == 5000
    assert p.max_output_tokens_for("a") == 100
    assert p.max_output_tokens_for("b") == -1
    assert p.effective_reasoning_protocol() == "openai"
    legacy = ProviderConfig(name="old", model="m", request_url="https://x.deepseek.com/c")
    assert legacy.all_models() == ["m"]
    assert legacy.default_model() == "m"
    assert legacy.effective_reasoning_protocol() == "deepseek"
    assert (
        ProviderConfig(
            name="n", base_url="https://api.deepseek.com", reasoning_protocol="none"
        ).effective_reasoning_protocol()
        == "none"
    )
    # "deepseek" in the path, not the host, does not count.
    assert (
        ProviderConfig(
            name="p", base_url="https://proxy.example/deepseek"
        ).effective_reasoning_protocol()
        == "openai"
    )


# --- model resolution ------------------------------------------------------------


def _multi_config() -> Config:
    return _with_urls(
        {
            "providers": [
                {
                    "name": "deepseek",
                    "models": ["deepseek-flash", "deepseek-v4-pro"],
                    "default": "deepseek-flash",
                },
                {"name": "local", "models": ["llama3"]},
                {"name": "openrouter", "models": ["meta-llama/llama-3", "deepseek-v4-pro"]},
                {"name": "open"},
            ]
        }
    )


def _with_urls(raw: dict) -> Config:
    """Every provider needs an address to be resolvable."""
    for entry in raw["providers"]:
        entry.setdefault("base_url", f"https://{entry['name']}.example/v1")
    return Config.model_validate(raw)


def test_resolve_default_chain() -> None:
    cfg = _multi_config()
    r = resolve_model(cfg, None)
    assert (r.provider.name, r.model) == ("deepseek", "deepseek-flash")
    cfg.default_model = "local"
    r = resolve_model(cfg, "")
    assert (r.provider.name, r.model) == ("local", "llama3")
    assert resolve_model(cfg, "deepseek").model == "deepseek-flash"


def test_resolve_provider_name() -> None:
    r = resolve_model(_multi_config(), "local")
    assert (r.provider.name, r.model) == ("local", "llama3")


def test_resolve_bare_model_first_provider_wins() -> None:
    r = resolve_model(_multi_config(), "deepseek-v4-pro")
    assert (r.provider.name, r.model) == ("deepseek", "deepseek-v4-pro")
    r = resolve_model(_multi_config(), "meta-llama/llama-3")
    assert (r.provider.name, r.model) == ("openrouter", "meta-llama/llama-3")


def test_resolve_provider_slash_model() -> None:
    cfg = _multi_config()
    r = resolve_model(cfg, "openrouter/deepseek-v4-pro")
    assert (r.provider.name, r.model) == ("openrouter", "deepseek-v4-pro")
    r = resolve_model(cfg, "openrouter/meta-llama/llama-3")
    assert (r.provider.name, r.model) == ("openrouter", "meta-llama/llama-3")
    assert r.ref == "openrouter/meta-llama/llama-3"
    assert resolve_model(cfg, r.ref) == r
    # A provider without a models list accepts any model id.
    r = resolve_model(cfg, "open/whatever/model:7b")
    assert (r.provider.name, r.model) == ("open", "whatever/model:7b")


def test_resolve_unknown_lists_providers_and_models() -> None:
    cfg = _multi_config()
    for ref in ("foo", "local/llama4", "nope/llama3"):
        with pytest.raises(ConfigError) as info:
            resolve_model(cfg, ref)
        msg = str(info.value)
        assert f"unknown model {ref!r}" in msg
        assert "deepseek: deepseek-flash, deepseek-v4-pro; local: llama3" in msg
        assert "openrouter: meta-llama/llama-3, deepseek-v4-pro" in msg
        assert "open: any open/<model>" in msg


def test_resolve_unknown_default_model_says_so() -> None:
    cfg = _multi_config()
    cfg.default_model = "gone"
    with pytest.raises(ConfigError, match=r"^default_model: unknown model 'gone'"):
        resolve_model(cfg, None)


def test_resolve_provider_without_default() -> None:
    with pytest.raises(ConfigError, match="has no default model"):
        resolve_model(_multi_config(), "open")


def test_resolve_builtin_default(home: Path, ws: Path) -> None:
    cfg = load_config(ws, home=home).config
    r = resolve_model(cfg, None)
    assert (r.provider.name, r.model) == ("deepseek", "deepseek-flash")
    with pytest.raises(
        ConfigError, match=r"Configured: deepseek: deepseek-flash, deepseek-v4-pro$"
    ):
        resolve_model(cfg, "foo")


# --- secrets ---------------------------------------------------------------------


def _ds(**kw: object) -> ProviderConfig:
    return ProviderConfig.model_validate(
        {"name": "deepseek", "api_key_env": "DEEPSEEK_API_KEY", **kw}
    )


def test_dotenv_parsing(home: Path) -> None:
    write(
        home / ".env",
        """# a comment
   # indented comment

DEEPSEEK_API_KEY=plain  # trailing comment
export LOCAL_KEY="double \\"quoted\\" # not a comment"
OTHER_KEY = 'single # quoted'
EMPTY=
garbage line without equals
""",
    )
    assert read_api_key(_ds(), home) == "plain"
    assert read_api_key(_ds(api_key_env="LOCAL_KEY"), home) == 'double "quoted" # not a comment'
    assert read_api_key(_ds(api_key_env="OTHER_KEY"), home) == "single # quoted"
    with pytest.raises(ConfigError):
        read_api_key(_ds(api_key_env="EMPTY"), home)


def test_env_var_wins_over_dotenv(home: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    write(home / ".env", "DEEPSEEK_API_KEY=from-file\n")
    monkeypatch.setenv("DEEPSEEK_API_KEY", "from-env")
    assert read_api_key(_ds(), home) == "from-env"
    monkeypatch.setenv("DEEPSEEK_API_KEY", "")
    assert read_api_key(_ds(), home) == "from-file"


def test_missing_key_message(home: Path) -> None:
    with pytest.raises(ConfigError) as info:
        read_api_key(_ds(), home)
    msg = str(info.value)
    assert "set DEEPSEEK_API_KEY in your environment" in msg
    assert f"add DEEPSEEK_API_KEY=… to {home / '.env'}" in msg


def test_reads_from_reasonix_home_by_default(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("REASONIX_HOME", str(tmp_path))
    write(tmp_path / ".env", "DEEPSEEK_API_KEY=k\n")
    assert read_api_key(_ds()) == "k"


def test_no_key_needed_without_api_key_env(home: Path) -> None:
    assert read_api_key(ProviderConfig(name="local"), home) == ""


def test_save_api_key_creates_private_file(home: Path) -> None:
    target = home / "nested"
    path = save_api_key("DEEPSEEK_API_KEY", "sk-123", target)
    assert path == target / ".env"
    assert stat.S_IMODE(path.stat().st_mode) == 0o600
    assert read_api_key(_ds(), target) == "sk-123"


def test_save_api_key_preserves_other_lines(home: Path) -> None:
    env = write(home / ".env", "# keys\nOTHER_KEY=o\nDEEPSEEK_API_KEY=old\nDEEPSEEK_API_KEY=dup\n")
    os.chmod(env, 0o644)
    save_api_key("DEEPSEEK_API_KEY", "new value#1", home)
    text = env.read_text()
    assert text == '# keys\nOTHER_KEY=o\nDEEPSEEK_API_KEY="new value#1"\n'
    assert stat.S_IMODE(env.stat().st_mode) == 0o600
    assert read_api_key(_ds(), home) == "new value#1"
    save_api_key("LOCAL_KEY", "l", home)
    assert env.read_text().endswith('DEEPSEEK_API_KEY="new value#1"\nLOCAL_KEY=l\n')


def test_save_api_key_never_world_readable(home: Path) -> None:
    # Even with a permissive umask, the file is created 0600 (no chmod race).
    code = (
        "import os, sys; from pathlib import Path\n"
        "os.umask(0)\n"
        "from reasonix_core.config import save_api_key\n"
        "p = save_api_key('DEEPSEEK_API_KEY', 'k', Path(sys.argv[1]))\n"
        "print(oct(os.stat(p).st_mode & 0o777))\n"
    )
    out = subprocess.run(
        [sys.executable, "-c", code, str(home)], capture_output=True, text=True, check=True
    )
    assert out.stdout.strip() == "0o600"


def test_save_api_key_rejects_bad_input(home: Path) -> None:
    with pytest.raises(ConfigError):
        save_api_key("NOT A NAME", "x", home)
    with pytest.raises(ConfigError):
        save_api_key("OK_NAME", "two\nlines", home)


def test_secret_env_names(home: Path, ws: Path) -> None:
    write(
        ws / "reasonix.toml",
        '[[providers]]\nname = "a"\napi_key_env = "A_KEY"\n'
        '[[providers]]\nname = "b"\n'
        '[[providers]]\nname = "c"\napi_key_env = "C_KEY"\n',
    )
    cfg = load_config(ws, home=home, trust_project=True).config
    assert secret_env_names(cfg) == frozenset({"A_KEY", "C_KEY"})
    assert secret_env_names(Config()) == frozenset({"DEEPSEEK_API_KEY"})


# --- prices ----------------------------------------------------------------------


def test_peak_boundaries() -> None:
    monday = datetime(2026, 11, 2, tzinfo=UTC)
    assert monday.weekday() == 0
    at = lambda h, m=0, s=0: monday.replace(hour=h, minute=m, second=s)  # noqa: E731
    assert not is_peak(at(0, 59, 59))
    assert is_peak(at(1))  # closed at start
    assert is_peak(at(3, 59, 59))
    assert not is_peak(at(4))  # open at end
    assert not is_peak(at(5, 59, 59))
    assert is_peak(at(6))
    assert is_peak(at(9, 59, 59))
    assert not is_peak(at(10))
    friday = monday + timedelta(days=4)
    assert is_peak(friday.replace(hour=7))
    assert not is_peak((monday + timedelta(days=5)).replace(hour=7))  # Saturday
    assert not is_peak((monday + timedelta(days=6)).replace(hour=2))  # Sunday


def test_price_for_models_and_bands() -> None:
    peak = datetime(2026, 11, 2, 2, 0, tzinfo=UTC)
    off = datetime(2026, 11, 2, 4, 0, tzinfo=UTC)
    flash_peak = price_for("deepseek-flash", peak)
    assert flash_peak is not None
    assert (flash_peak.cache_hit, flash_peak.cache_miss, flash_peak.output) == (0.006, 0.30, 1.20)
    flash_off = price_for("deepseek-flash", off)
    assert flash_off is not None
    assert (flash_off.cache_hit, flash_off.cache_miss, flash_off.output) == (0.003, 0.15, 0.60)
    assert price_for("deepseek-v4-flash", peak) == flash_peak
    pro_peak = price_for("deepseek-v4-pro", peak)
    pro_off = price_for("deepseek-v4-pro", off)
    assert pro_peak is not None and pro_off is not None
    assert (pro_peak.cache_hit, pro_peak.cache_miss, pro_peak.output) == (0.044, 1.32, 3.96)
    assert (pro_off.cache_hit, pro_off.cache_miss, pro_off.output) == (0.022, 0.66, 1.98)
    assert price_for("gpt-4o", peak) is None
    assert set(DEEPSEEK_PRICES_USD) == {"deepseek-flash", "deepseek-v4-flash", "deepseek-v4-pro"}
    # 1M hit + 1M miss + 1M output.
    assert flash_off.cost(
        cache_hit_tokens=1_000_000, cache_miss_tokens=1_000_000, output_tokens=1_000_000
    ) == pytest.approx(0.753)


def test_price_for_timezones() -> None:
    beijing = timezone(timedelta(hours=8))
    # 09:00 Beijing Monday = 01:00 UTC Monday: peak.
    assert is_peak(datetime(2026, 11, 2, 9, 0, tzinfo=beijing))
    # 12:00 Beijing = 04:00 UTC: off-peak (open end).
    assert not is_peak(datetime(2026, 11, 2, 12, 0, tzinfo=beijing))
    # Naive datetimes are UTC.
    assert is_peak(datetime(2026, 11, 2, 1, 0))


# --- write-back and import cost -------------------------------------------------


def test_set_config_value_preserves_comments(home: Path, ws: Path) -> None:
    from reasonix_core.config import set_config_value

    project = write(ws / "reasonix.toml", '# my project\n[agent]\n# keep me\neffort = "high"\n')
    set_config_value(project, "agent.compact_ratio", 0.7)
    text = project.read_text()
    assert "# my project" in text and "# keep me" in text
    assert load_config(ws, home=home).config.agent.compact_ratio == 0.7
    with pytest.raises(ConfigError, match=r"agent\.compact_ratio"):
        set_config_value(project, "agent.compact_ratio", 0.95)
    assert load_config(ws, home=home).config.agent.compact_ratio == 0.7  # untouched
    set_config_value(project, "agent.compact_ratio", None)
    assert "compact_ratio" not in project.read_text()
    new = home / "config.toml"
    set_config_value(new, "permissions.preset", "auto")
    assert load_config(ws, home=home).config.permissions.preset == "auto"


def test_load_path_does_not_import_tomlkit_or_ui(home: Path, ws: Path) -> None:
    code = (
        "import sys; from pathlib import Path\n"
        "from reasonix_core.config import load_config, resolve_model\n"
        # pydantic-settings builds the layers: imported by a load, not by the import.
        "assert 'pydantic_settings' not in sys.modules\n"
        "resolve_model(load_config(Path(sys.argv[1]), home=Path(sys.argv[2])).config, None)\n"
        "bad = [m for m in ('tomlkit', 'textual', 'rich') if m in sys.modules]\n"
        "print(bad)\n"
    )
    out = subprocess.run(
        [sys.executable, "-c", code, str(ws), str(home)],
        capture_output=True,
        text=True,
        check=True,
    )
    assert out.stdout.strip() == "[]"


def test_subagent_scheduling_keys(home: Path, ws: Path) -> None:
    defaults = load_config(ws, home=home).config.agent
    assert (
        defaults.max_subagent_depth,
        defaults.max_subagent_concurrency,
        defaults.max_parallel_writers,
    ) == (2, 6, 3)
    write(home / "config.toml", "[agent]\nmax_subagent_concurrency = 2\nmax_parallel_writers = 1\n")
    agent = load_config(ws, home=home).config.agent
    assert (agent.max_subagent_concurrency, agent.max_parallel_writers) == (2, 1)
    assert agent.legacy == {}
    write(home / "config.toml", "[agent]\nmax_parallel_writers = 0\n")
    with pytest.raises(ConfigError, match=r"agent\.max_parallel_writers"):
        load_config(ws, home=home)
