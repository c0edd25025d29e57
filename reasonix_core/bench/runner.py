"""``reasonix bench run``: every (task, arm, repetition) as a real ``reasonix run``.

Each run gets a fresh temporary folder holding its workspace (the task's
starting files) and its own Reasonix home, whose generated ``config.toml`` has one
provider entry and the run's settings: runs never share a session store, a
workspace or a cache ledger, so ``--jobs N`` cannot mix them up. The agent runs as
``python -m reasonix_tui.cli run PROMPT --output-format stream-json --metrics
PATH`` in its own process group (a timeout kills the group), then the task's
verifier runs in the workspace. The trajectory goes to
``OUT/runs/<task>/<arm>/<rep>/trajectory.json`` with the raw stream, stderr,
metrics and (``--record``) the cassette beside it; ``OUT/summary.json`` holds the
summary of all of them.
"""

from __future__ import annotations

import contextlib
import json
import os
import shlex
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time
import tomllib
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from reasonix_core.bench.cassette import (
    CASSETTE_FILE,
    Cassette,
    Mismatch,
    RunPlaces,
    find_cassette,
    load_cassette,
)
from reasonix_core.bench.task import NAME, RUN_FLAG_KEYS, Task, check_setting_key
from reasonix_core.bench.trajectory import read_metrics, read_stream, seed_fields
from reasonix_core.errors import BenchError
from reasonix_core.jsontext import dumps_utf8

# The key variable of the generated provider entry when replaying (no real key is sent).
REPLAY_KEY_ENV = "REASONIX_BENCH_REPLAY_KEY"
VERIFY_TIMEOUT = 120.0
# What a cassette keeps of the provider entry: what shapes the request body. Never
# its address, key variable or headers (a header may carry a credential), and a
# replayed cassette can set nothing else.
CASSETTE_PROVIDER_KEYS = frozenset(
    {
        "context_window",
        "max_output_tokens",
        "model_overrides",
        "reasoning_protocol",
        "effort",
        "prices",
        "strip_chain_of_thought",
    }
)
# Exit status of a verify.py that raised: a crash is not a verdict.
VERIFY_CRASHED = 70
_VERIFY_PY = (
    "import runpy, sys, traceback\n"
    "path = sys.argv.pop(1)\n"
    "try:\n"
    "    runpy.run_path(path, run_name='__main__')\n"
    "except SystemExit:\n"
    "    raise\n"
    "except BaseException:\n"
    "    traceback.print_exc()\n"
    f"    sys.exit({VERIFY_CRASHED})\n"
)


@dataclass(frozen=True, slots=True)
class Arm:
    """A named set of settings; the runs of each arm are compared side by side."""

    name: str
    settings: dict[str, Any] = field(default_factory=dict)


def parse_value(text: str) -> Any:
    """A setting's value as TOML reads it (``0.5``, ``true``, ``[1]``), else the text."""
    try:
        return tomllib.loads(f"v = {text}")["v"]
    except tomllib.TOMLDecodeError:
        return text


def parse_arm(text: str) -> Arm:
    """``NAME=key=value,key=value`` (or just ``NAME``)."""
    name, _, rest = text.partition("=")
    name = name.strip()
    if not NAME.fullmatch(name):
        raise BenchError(
            f"--arm {text!r}: the arm needs a name (letters, digits, - _ ., not first a dot)"
        )
    settings: dict[str, Any] = {}
    for part in filter(None, (p.strip() for p in rest.split(","))) if rest else ():
        key, eq, value = part.partition("=")
        key = key.strip()
        if not eq:
            raise BenchError(f"--arm {text!r}: {part!r} is not key=value")
        problem = check_setting_key(key)
        if problem:
            raise BenchError(f"--arm {text!r}: {problem}")
        settings[key] = parse_value(value.strip())
    return Arm(name, settings)


@dataclass(kw_only=True)
class BenchOptions:
    tasks: list[Task]
    out: Path
    arms: list[Arm] = field(default_factory=lambda: [Arm("default")])
    model: str | None = None
    repeat: int = 1
    jobs: int = 1
    max_cost: float | None = None
    record: bool = False
    replay: Path | None = None
    # The provider entry to use instead of resolving --model in the user's
    # configuration (the scripted corpus and the tests point it at a loopback model).
    provider: dict[str, Any] | None = None
    # What a --record cassette says its answers are: "recorded" (a real provider) or
    # "scripted" (a stand-in model), with a note.
    record_source: str = "recorded"
    record_note: str = ""
    workspace: Path = field(default_factory=Path.cwd)
    python: str = sys.executable


@dataclass(frozen=True, slots=True)
class RunSpec:
    task: Task
    arm: Arm
    rep: int

    @property
    def key(self) -> str:
        return f"{self.task.name}/{self.arm.name}/{self.rep}"


@dataclass
class BenchResult:
    trajectories: list[dict[str, Any]]
    summary: dict[str, Any]
    out: Path


Log = Callable[[str], None]


# --------------------------------------------------------------------------- provider and cost


def configured_provider(
    workspace: Path, model: str | None
) -> tuple[dict[str, Any], str, dict[str, str]]:
    """The provider entry and model id ``--model`` names in the user's configuration,
    and its key as an environment variable (from the environment or ``<home>/.env``:
    the runs' own homes have no ``.env``)."""
    from reasonix_core.config import load_config, resolve_model
    from reasonix_core.config.secrets import read_api_key

    resolved = resolve_model(load_config(workspace).config, model)
    entry = resolved.provider.model_dump(mode="json", exclude_defaults=True)
    entry = {k: v for k, v in entry.items() if v is not None}
    entry["kind"] = resolved.provider.kind
    # Pinned: left unset it is guessed from the host, which a proxy or replay changes.
    entry["reasoning_protocol"] = resolved.provider.effective_reasoning_protocol()
    key = read_api_key(resolved.provider)
    name = resolved.provider.api_key_env.strip()
    return entry, resolved.model, ({name: key} if name else {})


def provider_request_url(entry: dict[str, Any]) -> str:
    """The full URL the provider entry sends its requests to (what a proxy relays to)."""
    from reasonix_core.config.schema import ProviderConfig
    from reasonix_core.provider.base import create_provider
    from reasonix_core.provider.http import HttpProvider

    config = ProviderConfig.model_validate({**entry, "name": "bench"})
    provider = create_provider(config, "")
    # Every built-in provider kind is an HttpProvider, which knows its URL.
    assert isinstance(provider, HttpProvider)
    return str(provider.url)


def estimate_cost(
    tasks: list[Task], arms: list[Arm], repeat: int, model: str, provider: dict[str, Any]
) -> tuple[float, str]:
    """An upper bound of the spend: every allowed step a full cache miss of the
    starting files plus the built-in prompt, and 2,000 output tokens."""
    from reasonix_core.config.prices import DEEPSEEK_PRICES_USD, Price

    prices = provider.get("prices") or {}
    if model in prices:
        price = Price.model_validate(prices[model])
    else:
        pair = DEEPSEEK_PRICES_USD.get(model.strip().lower())
        if pair is None:
            return 0.0, "USD"
        price = max(pair, key=lambda p: p.cache_miss)
    window = int(provider.get("context_window") or 131072)
    total = 0.0
    for task in tasks:
        files = 0
        for root in filter(None, (task.base_folder(), task.workdir)):
            if root.is_dir():
                files += sum(p.stat().st_size for p in root.rglob("*") if p.is_file())
        prompt = min(window, 6000 + files // 3)
        per_run = task.spec.limits.max_steps * price.cost(
            cache_hit_tokens=0, cache_miss_tokens=prompt, output_tokens=2000
        )
        total += per_run * len(arms) * repeat
    return total, price.currency


# --------------------------------------------------------------------------- one run


def _settings_for(spec: RunSpec, model: str | None) -> tuple[dict[str, Any], list[str]]:
    allowed, ignored = spec.task.arm_keys_allowed(list(spec.arm.settings))
    merged = dict(spec.task.spec.settings)
    if model:
        merged["model"] = model
    merged.update({k: spec.arm.settings[k] for k in allowed})
    return merged, ignored


def _config_toml(provider: dict[str, Any], settings: dict[str, Any]) -> str:
    import tomlkit

    doc = tomlkit.document()
    tables: dict[str, dict[str, Any]] = {}
    entry = dict(provider)
    for key, value in settings.items():
        table, _, name = key.partition(".")
        if not name:
            continue
        if table == "provider":
            entry[name] = value
        else:
            tables.setdefault(table, {})[name] = value
    providers = tomlkit.aot()
    providers.append(tomlkit.item(entry))
    doc["providers"] = providers
    for table, values in tables.items():
        doc[table] = values
    return tomlkit.dumps(doc)


def _child_env(home: Path, extra: dict[str, str]) -> dict[str, str]:
    """This process's environment without its ``REASONIX_*`` settings (the bench
    owns the run's settings), with the run's own home."""
    from reasonix_core.config.sources import ENV_PREFIX, environment_settings

    settings = environment_settings()
    env = {
        name: value
        for name, value in os.environ.items()
        if not (name.startswith(ENV_PREFIX) and name[len(ENV_PREFIX) :].lower() in settings)
    }
    env["REASONIX_HOME"] = str(home)
    env.update(extra)
    return env


def _kill_group(proc: subprocess.Popen[Any]) -> None:
    try:
        os.killpg(proc.pid, signal.SIGKILL)
    except (ProcessLookupError, PermissionError):
        pass


class _Processes:
    """The process groups the bench started, so an interrupted bench leaves none behind
    (each run has its own session: a Ctrl-C at the terminal does not reach it)."""

    def __init__(self) -> None:
        self._live: set[subprocess.Popen[Any]] = set()
        self._lock = threading.Lock()
        self.stopping = threading.Event()

    def start(self, argv: list[str], **kw: Any) -> subprocess.Popen[Any]:
        with self._lock:
            if self.stopping.is_set():
                raise BenchError("the bench was interrupted")
            proc = subprocess.Popen(argv, start_new_session=True, **kw)
            self._live.add(proc)
        return proc

    def done(self, proc: subprocess.Popen[Any]) -> None:
        with self._lock:
            self._live.discard(proc)

    def stop_all(self) -> None:
        with self._lock:
            self.stopping.set()
            for proc in self._live:
                _kill_group(proc)


def _run_process(
    processes: _Processes,
    argv: list[str],
    *,
    cwd: Path,
    env: dict[str, str],
    stdout: Path,
    stderr: Path,
    timeout: float,
    pass_fds: tuple[int, ...] = (),
) -> tuple[int | None, bool]:
    """Run ``argv`` in its own process group; (exit status, timed out)."""
    with stdout.open("wb") as out, stderr.open("wb") as err:
        proc = processes.start(
            argv, cwd=cwd, env=env, stdin=subprocess.DEVNULL, stdout=out, stderr=err,
            pass_fds=pass_fds,
        )  # fmt: skip
        try:
            return proc.wait(timeout=timeout), False
        except subprocess.TimeoutExpired:
            _kill_group(proc)
            proc.wait()
            return None, True
        finally:
            if proc.poll() is None:
                _kill_group(proc)
                proc.wait()
            processes.done(proc)


def _verifier_copy(task: Task, dest: Path) -> Path:
    """The verifier as the sandbox sees it: a copy of the task folder (without its
    starting files) and of the modules beside the tasks folder (``verifylib.py``),
    in the same layout, so relative imports work wherever the corpus lives."""
    tasks_dir = task.folder.parent
    shutil.copytree(
        task.folder, dest / tasks_dir.name / task.name, ignore=shutil.ignore_patterns("workdir")
    )
    for helper in tasks_dir.parent.glob("*.py"):
        shutil.copyfile(helper, dest / helper.name)
    return dest / tasks_dir.name / task.name / task.verifier.name


def _verify(
    processes: _Processes,
    task: Task,
    ws: Path,
    answer: Path,
    folder: Path,
    env: dict[str, str],
    bash_sandbox: str,
) -> dict[str, Any]:
    """Run the verifier in the workspace, confined like the agent's shell commands:
    it imports and runs what the agent wrote. Only the workspace and a scratch copy
    of the verifier are writable, the network is off."""
    from reasonix_core.tool.sandbox import SandboxPolicy
    from reasonix_core.tool.shell_sandbox import SandboxUnavailable, prepare_command

    scratch = ws.parent / "verifier"
    verifier = _verifier_copy(task, scratch)
    shutil.copyfile(answer, scratch / answer.name)
    answer_copy = scratch / answer.name
    if verifier.suffix == ".py":
        # The base interpreter, not the virtualenv's: verifiers use the standard library
        # only, and a virtualenv under /tmp (a CI checkout there) is hidden from the
        # sandbox, which mounts an empty tmpfs over /tmp.
        python = getattr(sys, "_base_executable", None) or sys.executable
        argv = [python, "-c", _VERIFY_PY, str(verifier), str(ws), str(answer_copy)]
    else:
        argv = ["bash", str(verifier), str(ws), str(answer_copy)]
    out, err = folder / "verify.stdout", folder / "verify.stderr"
    started = time.monotonic()
    verify_env = dict(env, BENCH_WORKDIR=str(ws), BENCH_ANSWER=str(answer_copy))
    policy = SandboxPolicy(
        workspace=ws,
        temp_dir=scratch,
        bash="off" if bash_sandbox == "off" else "enforce",
    )
    try:
        command = prepare_command(policy, shlex.join(argv))
    except SandboxUnavailable as exc:
        return {"exit_code": None, "timed_out": False, "seconds": 0.0, "stdout": "",
                "stderr": f"the verifier was not run: {exc}"}  # fmt: skip
    try:
        code, timed_out = _run_process(
            processes, command.argv, cwd=ws, env=verify_env, stdout=out, stderr=err,
            timeout=VERIFY_TIMEOUT, pass_fds=command.pass_fds,
        )  # fmt: skip
    finally:
        command.close()
    result = {
        "exit_code": code,
        "timed_out": timed_out,
        "seconds": round(time.monotonic() - started, 3),
        "stdout": out.read_text(encoding="utf-8", errors="replace")[-4000:],
        "stderr": err.read_text(encoding="utf-8", errors="replace")[-4000:],
    }
    out.unlink()
    err.unlink()
    return result


class _Runner:
    def __init__(self, options: BenchOptions, log: Log) -> None:
        self.options = options
        self.log = log
        self.spent = 0.0
        self._lock = threading.Lock()
        self.processes = _Processes()
        self.provider: dict[str, Any] | None = None
        self.model = ""
        # The provider's key, given to the agent's process only (never to a verifier).
        self.key_env: dict[str, str] = {}
        if options.replay is None:
            if options.provider is not None:
                self.provider = dict(options.provider)
                self.model = options.model or (self.provider.get("models") or [""])[0]
            else:
                self.provider, self.model, self.key_env = configured_provider(
                    options.workspace, options.model
                )

    def folder(self, spec: RunSpec) -> Path:
        return self.options.out / "runs" / spec.task.name / spec.arm.name / str(spec.rep)

    def skipped(self, spec: RunSpec, why: str) -> dict[str, Any]:
        trajectory = self._base(spec, self.model, {}, [])
        trajectory.update(status="skipped", solved=False, reason=why)
        self._write(spec, trajectory)
        return trajectory

    def _base(
        self, spec: RunSpec, model: str, settings: dict[str, Any], ignored: list[str]
    ) -> dict[str, Any]:
        return {
            "task": spec.task.name,
            "category": spec.task.spec.category,
            "arm": spec.arm.name,
            "arm_settings": spec.arm.settings,
            "settings": settings,
            "ignored_arm_settings": ignored,
            "rep": spec.rep,
            "model": model,
            "mode": "replay"
            if self.options.replay
            else ("record" if self.options.record else "live"),
        }

    def _write(self, spec: RunSpec, trajectory: dict[str, Any]) -> None:
        folder = self.folder(spec)
        folder.mkdir(parents=True, exist_ok=True)
        (folder / "trajectory.json").write_text(
            dumps_utf8(trajectory, indent=2) + "\n", encoding="utf-8"
        )

    def run(self, spec: RunSpec) -> dict[str, Any]:
        options = self.options
        if self.processes.stopping.is_set():
            return self.skipped(spec, "the bench was interrupted")
        with self._lock:
            if options.max_cost is not None and self.spent >= options.max_cost:
                return self.skipped(
                    spec, f"--max-cost {options.max_cost:g} reached (spent {self.spent:.6f})"
                )
        folder = self.folder(spec)
        if folder.exists():
            shutil.rmtree(folder)
        folder.mkdir(parents=True)
        scratch = Path(tempfile.mkdtemp(prefix="reasonix-bench-"))
        try:
            trajectory = self._run_in(spec, folder, scratch)
        finally:
            shutil.rmtree(scratch, ignore_errors=True)
        cost = (trajectory.get("metrics") or {}).get("cost") or 0.0
        with self._lock:
            self.spent += float(cost)
        self._write(spec, trajectory)
        self.log(f"{spec.key}: {trajectory['status']}")
        return trajectory

    def _run_in(self, spec: RunSpec, folder: Path, scratch: Path) -> dict[str, Any]:
        ws, home = scratch / "ws", scratch / "home"
        spec.task.materialise(ws)
        home.mkdir()
        places = RunPlaces(workdir=ws, home=home)
        settings, ignored = _settings_for(spec, self.options.model)
        source = self._source(spec, settings)
        trajectory = self._base(spec, source.model, settings, ignored)
        endpoint = self._endpoint(source, places)
        env = _child_env(home, source.extra_env)
        started = time.monotonic()
        code, timed_out = self._run_agent(spec, settings, source, endpoint, places, folder, env)
        harness_ms = int((time.monotonic() - started) * 1000)
        stream = read_stream(
            (folder / "stream.jsonl").read_text(encoding="utf-8", errors="replace")
        )
        metrics = read_metrics(folder / "metrics.json", stream["result"])
        answer = folder / "answer.txt"
        answer.write_text(stream["final_answer"] or "", encoding="utf-8")
        verify = _verify(
            self.processes, spec.task, ws, answer, folder, env,
            str(settings.get("sandbox.bash") or "enforce"),
        )  # fmt: skip
        stderr = (folder / "stderr.txt").read_text(encoding="utf-8", errors="replace")
        mismatch, replay_info = self._replay_info(spec, source, endpoint, folder)
        status = _status(timed_out, code, stream, mismatch, verify)
        result = stream["result"] or {}
        trajectory.update(
            status=status,
            solved=status == "solved",
            exit_code=code,
            outcome=(metrics or {}).get("outcome"),
            result_subtype=result.get("subtype"),
            **seed_fields(metrics),
            cost=(metrics or {}).get("cost"),
            currency=(metrics or {}).get("currency"),
            harness_ms=harness_ms,
            tool_calls=stream["tool_calls"],
            final_answer=stream["final_answer"],
            error=result.get("result") if result.get("is_error") else None,
            verify=verify,
            replay=replay_info,
            stderr_tail=stderr[-2000:],
            metrics=metrics,
        )
        return trajectory

    def _source(self, spec: RunSpec, settings: dict[str, Any]) -> _Source:
        """The provider a run talks to: its cassette's (replay) or the configured one."""
        replay = self.options.replay
        if replay is None:
            assert self.provider is not None
            provider = dict(self.provider)
            model = str(settings.get("model") or self.model)
            if model != self.model:
                provider["models"] = sorted({*provider.get("models", []), model})
            source = _Source(provider, model)
        else:
            path = find_cassette(replay, spec.task.name, spec.arm.name, spec.rep)
            if path is None:
                raise BenchError(f"{replay}: no cassette for {spec.key}")
            cassette = load_cassette(path)
            provider = {k: v for k, v in cassette.provider.items() if k in CASSETTE_PROVIDER_KEYS}
            provider["kind"] = cassette.kind
            model = str(settings.get("model") or cassette.model)
            provider["models"] = sorted({cassette.model, model})
            provider["api_key_env"] = REPLAY_KEY_ENV
            source = _Source(provider, model, cassette, path, {REPLAY_KEY_ENV: "replay"})
        source.provider["name"] = "bench"
        source.provider["default"] = source.model
        return source

    def _endpoint(self, source: _Source, places: RunPlaces) -> Any:
        """The loopback endpoint between the run and its provider, if any."""
        if source.cassette is not None:
            from reasonix_core.bench.loopback import ReplayServer

            return ReplayServer(source.cassette, places)
        if self.options.record:
            from reasonix_core.bench.loopback import RecordingProxy

            provider = source.provider
            return RecordingProxy(
                provider_request_url(provider),
                str(provider.get("kind", "openai")),
                provider,
                places,
            )
        return None

    def _run_agent(
        self,
        spec: RunSpec,
        settings: dict[str, Any],
        source: _Source,
        endpoint: Any,
        places: RunPlaces,
        folder: Path,
        env: dict[str, str],
    ) -> tuple[int | None, bool]:
        """``reasonix run`` on the task, its config written once the endpoint listens."""
        argv = [
            self.options.python, "-m", "reasonix_tui.cli", "run", spec.task.spec.prompt,
            "--output-format", "stream-json", "--metrics", str(folder / "metrics.json"),
            "--max-steps", str(settings.get("max_steps") or spec.task.spec.limits.max_steps),
            "--permission-mode", str(settings.get("permission_mode") or "yolo"),
        ]  # fmt: skip
        if settings.get("effort"):
            argv += ["--effort", str(settings["effort"])]
        config_settings = {k: v for k, v in settings.items() if k not in RUN_FLAG_KEYS}
        provider = source.provider
        with endpoint if endpoint is not None else contextlib.nullcontext():
            if endpoint is not None:
                provider["base_url"] = endpoint.base_url
                provider["request_url"] = endpoint.request_url
            (places.home / "config.toml").write_text(
                _config_toml(provider, config_settings), encoding="utf-8"
            )
            return _run_process(
                self.processes, argv, cwd=places.workdir, env=dict(env, **self.key_env),
                stdout=folder / "stream.jsonl",
                stderr=folder / "stderr.txt", timeout=spec.task.spec.limits.timeout_seconds,
            )  # fmt: skip

    def _replay_info(
        self, spec: RunSpec, source: _Source, endpoint: Any, folder: Path
    ) -> tuple[Mismatch | None, dict[str, Any] | None]:
        """What the run's cassette says: served and mismatched (replay), or saved (record)."""
        options = self.options
        if source.cassette is not None:
            mismatch = endpoint.unused_mismatch()
            return mismatch, {
                "cassette": str(source.cassette_path),
                "source": source.cassette.source,
                "requests_served": endpoint.served,
                "mismatch": mismatch.to_json() if mismatch else None,
            }
        if not options.record:
            return None, None
        provider = source.provider
        recorded = Cassette(
            source=options.record_source,  # type: ignore[arg-type]
            note=options.record_note,
            task=spec.task.name,
            model=source.model,
            kind=str(provider.get("kind", "openai")),
            provider={k: v for k, v in provider.items() if k in CASSETTE_PROVIDER_KEYS},
            interactions=endpoint.interactions,
        )  # fmt: skip
        recorded.save(folder / CASSETTE_FILE)
        return None, {"cassette": str(folder / CASSETTE_FILE), "source": recorded.source,
                      "requests_recorded": len(recorded.interactions), "mismatch": None}  # fmt: skip


@dataclass(slots=True)
class _Source:
    """Where one run's answers come from: the provider entry it is configured with."""

    provider: dict[str, Any]
    model: str
    cassette: Cassette | None = None
    cassette_path: Path | None = None
    # Environment the run needs besides the usual (the replay's stand-in key).
    extra_env: dict[str, str] = field(default_factory=dict)


def _status(
    timed_out: bool,
    code: int | None,
    stream: dict[str, Any],
    mismatch: Mismatch | None,
    verify: dict[str, Any],
) -> str:
    """A run's status: how far it got, then whether the verifier passed it."""
    if timed_out:
        return "timeout"
    if stream["result"] is None or code not in (0, 1):
        return "agent_error"
    if mismatch is not None:
        return "replay_mismatch"
    if verify["timed_out"] or verify["exit_code"] not in (0, 1):
        return "verify_error"
    return "solved" if verify["exit_code"] == 0 else "unsolved"


def plan_runs(options: BenchOptions) -> list[RunSpec]:
    return [
        RunSpec(task, arm, rep)
        for rep in range(1, options.repeat + 1)
        for task in options.tasks
        for arm in options.arms
    ]


def run_bench(options: BenchOptions, log: Log = lambda _: None) -> BenchResult:
    """Run every planned run (``jobs`` at a time) and write trajectories and summary."""
    from reasonix_core.bench.summary import summarise

    if options.repeat < 1:
        raise BenchError("--repeat must be at least 1")
    if options.jobs < 1:
        raise BenchError("--jobs must be at least 1")
    if options.record and options.replay is not None:
        raise BenchError("--record and --replay exclude each other")
    names = [arm.name for arm in options.arms]
    if len(set(names)) != len(names):
        raise BenchError("two arms share a name")
    runner = _Runner(options, log)
    if options.replay is None and options.provider is None:
        assert runner.provider is not None
        cost, currency = estimate_cost(
            options.tasks, options.arms, options.repeat, runner.model, runner.provider
        )
        log(
            f"estimated cost: at most {cost:.4f} {currency} for "
            f"{len(plan_runs(options))} run(s) of {runner.model} (every step a cache miss)"
        )
    options.out.mkdir(parents=True, exist_ok=True)
    specs = plan_runs(options)
    if options.replay is not None:
        # Every cassette found and readable before the first run starts.
        for spec in specs:
            found = find_cassette(options.replay, spec.task.name, spec.arm.name, spec.rep)
            if found is None:
                raise BenchError(f"{options.replay}: no cassette for {spec.key}")
            load_cassette(found)
    pool = ThreadPoolExecutor(max_workers=options.jobs)
    try:
        trajectories = list(pool.map(runner.run, specs))
    except BaseException:
        # Ctrl-C (or a bad cassette): kill every run in flight, start no other.
        runner.processes.stop_all()
        raise
    finally:
        pool.shutdown(wait=True, cancel_futures=True)
    summary = summarise(trajectories)
    summary["max_cost"] = options.max_cost
    (options.out / "summary.json").write_text(
        dumps_utf8(summary, indent=2) + "\n", encoding="utf-8"
    )
    return BenchResult(trajectories, summary, options.out)


def _rep(name: str) -> int:
    return int(name) if name.isdigit() else 0


def load_trajectories(folder: Path) -> list[dict[str, Any]]:
    """Every trajectory.json under ``folder/runs``, in task / arm / repetition order."""
    runs = folder / "runs"
    if not runs.is_dir():
        raise BenchError(f"{folder}: not a bench output folder (no runs/)")
    out = []
    paths = sorted(
        runs.glob("*/*/*/trajectory.json"),
        key=lambda p: (p.parent.parent.parent.name, p.parent.parent.name, _rep(p.parent.name)),
    )
    for path in paths:
        try:
            out.append(json.loads(path.read_text(encoding="utf-8")))
        except (OSError, json.JSONDecodeError) as exc:
            raise BenchError(f"{path}: unreadable trajectory: {exc}") from None
    if not out:
        raise BenchError(f"{folder}: no trajectories under runs/")
    return out
