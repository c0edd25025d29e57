"""Prompt-cache hit ratio over a 20-step tool session, as the server reports it.

A real ``reasonix run --output-format stream-json --metrics PATH`` subprocess
works on a small generated Python project against the loopback fixture server
in its DeepSeek flavour, whose simulated prompt cache persists whole "cache
prefix units" (end of input, end of output) like the real service
(``reference/wire-formats.md`` §3). The scripted model reasons on every step,
makes 19 rounds of read-only tool calls (``ls``, ``read_file``, ``grep``,
``glob``; one round with two parallel calls), then answers. The prompt is the
real one: Reasonix's system prompt, a ``REASONIX.md`` of standing instructions,
and every built-in tool schema.

Reported: the run's hit ratio ``sum(cache_hit_tokens) / sum(prompt_tokens)``
(target >= 97%), the ratio per step, and for every step after the first an
account of the miss: the bytes the request appended after the previous
request's "end of output" unit (which is all that should miss) against what
the server actually missed. Any miss beyond the appended bytes is diagnosed by
comparing consecutive request bodies. The run's metrics file is reconciled
with the per-step usage events.

Run: ``.venv/bin/python bench/bench_cache_hit.py [--keep DIR]``
"""

from __future__ import annotations

import argparse
import json
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

from _common import (
    KEY,
    REASONIX_BIN,
    assistant_turns,
    bench_env,
    make_project,
    verdict,
    write_config,
)

from reasonix_core.agent.cache_ledger import common_prefix_length
from reasonix_testkit import ChatDialect, FixtureServer, RecordedRequest, Reply, ToolCallSpec
from reasonix_testkit.dialects.chat import render_prompt

TARGET = 0.97
STEPS = 20
PROMPT = (
    "Find every TODO in this project, check how the stock value is computed, and tell me "
    "what is missing before we can support several currencies."
)
INSTRUCTIONS = """\
# Project notes for the agent

- This is a small inventory service. Python 3.11, no runtime dependencies.
- Tests live in `tests/` and run with `pytest -q`.
- Money is kept in integer cents everywhere; never use floats for prices.
- Keep modules small: one record type per module under `inventory/`.
- Public functions need a docstring; private helpers start with an underscore.
- Do not add dependencies without asking.
"""

# (reasoning, content, [(tool, arguments), ...]) for steps 1..19; step 20 answers.
SCRIPT: list[tuple[str, str, list[tuple[str, str]]]] = [
    ("Start with the layout of the project.", "", [("ls", '{"path":".","recursive":true}')]),
    ("The README says what the service does.", "", [("read_file", '{"path":"README.md"}')]),
    ("Check the packaging metadata.", "", [("read_file", '{"path":"pyproject.toml"}')]),
    ("Search for TODO markers.", "Searching for TODOs.", [("grep", '{"pattern":"TODO"}')]),
    (
        "Every module has one; read the widget module first.",
        "",
        [("read_file", '{"path":"inventory/widget.py"}')],
    ),
    ("List all Python files.", "", [("glob", '{"pattern":"**/*.py"}')]),
    (
        "Compare two modules side by side.",
        "Reading two modules.",
        [
            ("read_file", '{"path":"inventory/gadget.py"}'),
            ("read_file", '{"path":"inventory/sprocket.py"}'),
        ],
    ),
    ("Where is total_value used?", "", [("grep", '{"pattern":"total_value"}')]),
    ("Look at the test.", "", [("read_file", '{"path":"tests/test_widget.py"}')]),
    ("What else is in the package folder?", "", [("ls", '{"path":"inventory"}')]),
    ("The entry point prints the value.", "", [("read_file", '{"path":"inventory/__main__.py"}')]),
    (
        "How is restocking validated?",
        "",
        [("grep", '{"pattern":"def restock","path":"inventory"}')],
    ),
    (
        "Read the bracket module's money code.",
        "",
        [("read_file", '{"path":"inventory/bracket.py","offset":14,"limit":20}')],
    ),
    ("Which tests exist?", "", [("glob", '{"pattern":"tests/*.py"}')]),
    ("Check the gear module.", "", [("read_file", '{"path":"inventory/gear.py"}')]),
    ("Find every record class.", "", [("grep", '{"pattern":"^class ","glob":"*.py"}')]),
    ("Check the valve module.", "", [("read_file", '{"path":"inventory/valve.py"}')]),
    ("What is in tests/?", "", [("ls", '{"path":"tests"}')]),
    ("Last module: bolt.", "", [("read_file", '{"path":"inventory/bolt.py"}')]),
]
FINAL = (
    "Every module has the same `# TODO: handle currency conversion` in `total_value`. "
    "Values are integer cents (`quantity * price_cents`) with no currency field, so "
    "supporting several currencies needs a currency on each record, conversion rates, "
    "and a rule for summing mixed currencies."
)


WARM_UP_PROMPTS = ("Hello, who are you?", "What can you do in this project?")


def responder(request: RecordedRequest) -> Reply:
    messages = (request.json or {}).get("messages") or []
    first_user = next((m.get("content") or "" for m in messages if m.get("role") == "user"), "")
    if first_user.startswith(WARM_UP_PROMPTS):
        return Reply(reasoning="A greeting.", content="I am Reasonix, a coding agent.")
    step = assistant_turns(request.json) + 1
    if step > len(SCRIPT):
        return Reply(reasoning="I have seen enough to answer.", content=FINAL)
    reasoning, content, calls = SCRIPT[step - 1]
    return Reply(
        reasoning=reasoning,
        content=content,
        tool_calls=[ToolCallSpec(name, args) for name, args in calls],
    )


def tokens(n_bytes: int) -> int:
    return (n_bytes + 3) // 4  # the fixture's tokenizer: 4 bytes a token


def diagnose(prev: dict[str, Any], cur: dict[str, Any]) -> list[str]:
    """Why request ``cur`` is not an append-only extension of ``prev``."""
    notes: list[str] = []
    for key in sorted(set(prev) | set(cur)):
        if key == "messages":
            continue
        if prev.get(key) != cur.get(key):
            notes.append(
                f"top-level {key!r} changed: {prev.get(key)!r:.120} -> {cur.get(key)!r:.120}"
            )
    pm, cm = prev.get("messages") or [], cur.get("messages") or []
    for i, message in enumerate(pm):
        if i >= len(cm):
            notes.append(f"message {i} was dropped")
            break
        a = json.dumps(message, ensure_ascii=False, sort_keys=False)
        b = json.dumps(cm[i], ensure_ascii=False, sort_keys=False)
        if a != b:
            at = common_prefix_length(a.encode(), b.encode())
            notes.append(
                f"message {i} ({message.get('role')}) re-serialised differently at byte {at}: "
                f"{a[max(0, at - 40) : at + 60]!r} -> {b[max(0, at - 40) : at + 60]!r}"
            )
    return notes


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--keep", type=Path, help="copy the session, metrics and bodies here")
    parser.add_argument(
        "--warm",
        type=int,
        default=0,
        choices=range(len(WARM_UP_PROMPTS) + 1),
        help="run this many short unrelated sessions first, so the server has seen the "
        "shared system prompt + tools prefix (DeepSeek persists a prefix several requests "
        "share as its own cache unit); 0 measures a cold cache",
    )
    args = parser.parse_args()

    with tempfile.TemporaryDirectory(prefix="reasonix-bench-") as tmp:
        tmp_path = Path(tmp)
        home, workspace = tmp_path / "home", tmp_path / "ws"
        workspace.mkdir()
        make_project(workspace)
        (workspace / "REASONIX.md").write_text(INSTRUCTIONS, encoding="utf-8")
        metrics_path = tmp_path / "metrics.json"

        with FixtureServer(ChatDialect("deepseek"), api_key=KEY) as server:
            server.responder = responder
            write_config(home, server.base_url)
            for warm_prompt in WARM_UP_PROMPTS[: args.warm]:
                subprocess.run(
                    [str(REASONIX_BIN), "run", warm_prompt],
                    cwd=workspace,
                    env=bench_env(home),
                    capture_output=True,
                    timeout=300,
                    check=True,
                )
            warm_requests = len(server.requests)
            proc = subprocess.run(
                [
                    str(REASONIX_BIN),
                    "run",
                    PROMPT,
                    "--output-format",
                    "stream-json",
                    "--metrics",
                    str(metrics_path),
                ],
                cwd=workspace,
                env=bench_env(home),
                capture_output=True,
                text=True,
                timeout=300,
            )
            requests = list(server.requests)[warm_requests:]
            # A follow-up turn in a new process (`reasonix run -c`): its request
            # must extend the session's last one, so only the new user turn misses.
            follow = subprocess.run(
                [
                    str(REASONIX_BIN),
                    "run",
                    "-c",
                    "Thanks. Which file should I change first?",
                    "--output-format",
                    "stream-json",
                ],
                cwd=workspace,
                env=bench_env(home),
                capture_output=True,
                text=True,
                timeout=300,
            )
            follow_requests = list(server.requests)[warm_requests + len(requests) :]
        if proc.returncode != 0:
            sys.exit(
                f"reasonix run exited {proc.returncode}:\n{proc.stderr}\n{proc.stdout[-2000:]}"
            )
        lines = [json.loads(line) for line in proc.stdout.splitlines() if line.strip()]
        result = lines[-1]
        usage_events = [e for e in lines if e.get("subtype") == "usage"]
        tool_events = [e for e in lines if e.get("subtype") == "tool_call_finished"]
        prefix_events = [e for e in lines if e.get("subtype") == "prefix_changed"]
        metrics = json.loads(metrics_path.read_text())
        if follow.returncode != 0:
            sys.exit(f"reasonix run -c exited {follow.returncode}:\n{follow.stderr}")
        follow_usage = [
            e["usage"]
            for e in map(json.loads, follow.stdout.splitlines())
            if e.get("subtype") == "usage"
        ]
        bodies = [json.loads(r.body) for r in requests if r.status == 200]
        rejected = [r for r in requests if r.status != 200]

        if args.keep:
            args.keep.mkdir(parents=True, exist_ok=True)
            shutil.copy(metrics_path, args.keep / "metrics.json")
            for session in (home / "sessions").rglob("*.jsonl"):
                shutil.copy(session, args.keep / session.name)
            for i, r in enumerate(requests, 1):
                (args.keep / f"request-{i:02d}.json").write_bytes(r.body)

    if rejected:
        print(
            f"WARNING: the server rejected {len(rejected)} request(s): "
            + ", ".join(str(r.status) for r in rejected)
        )
    if len(bodies) != STEPS or len(usage_events) != STEPS:
        sys.exit(f"expected {STEPS} requests, got {len(bodies)} bodies / {len(usage_events)} usage")
    failed_tools = [e for e in tool_events if e.get("is_error")]
    print(
        f"session: {STEPS} steps, {len(tool_events)} tool calls "
        f"({len(failed_tools)} failed), outcome {metrics['outcome']}"
    )
    if failed_tools:
        for e in failed_tools:
            print(f"  tool error: {e['name']}: {e['result'][:160]}")

    rendered = [render_prompt(b).encode("utf-8", "surrogatepass") for b in bodies]
    print(
        f"prefix: tools {len(json.dumps(bodies[0].get('tools'), separators=(',', ':')))} bytes "
        f"+ system prompt {len(bodies[0]['messages'][0]['content'].encode())} bytes; "
        f"first request renders to {tokens(len(rendered[0]))} tokens"
    )
    print(
        "\nstep  calls                         prompt     hit    miss   hit%   appended  unexplained"
    )
    unexplained_total = 0
    problems: list[str] = []
    sum_prompt = sum_hit = 0
    for i, (body, event) in enumerate(zip(bodies, usage_events, strict=True)):
        usage = event["usage"]
        prompt, hit, miss = (
            usage["prompt_tokens"],
            usage["cache_hit_tokens"],
            usage["cache_miss_tokens"],
        )
        sum_prompt += prompt
        sum_hit += hit
        if i == 0:
            # cold cache: everything is new; warm: only what follows the shared prefix
            appended = prompt - usage["cache_hit_tokens"]
        else:
            # The previous request's "end of output" unit is its prompt plus the
            # assistant message it produced, which this request replays next.
            prev_len = len(bodies[i - 1]["messages"])
            unit_body = dict(bodies[i - 1])
            unit_body["messages"] = body["messages"][: prev_len + 1]
            unit = render_prompt(unit_body).encode("utf-8", "surrogatepass")
            shared = common_prefix_length(unit, rendered[i])
            appended = prompt - tokens(shared) if shared == len(unit) else prompt
            if shared != len(unit):
                problems.append(
                    f"step {i + 1}: the previous output unit is not a prefix "
                    f"(diverges at byte {shared} of {len(unit)})"
                )
                problems.extend(f"  {note}" for note in diagnose(bodies[i - 1], body))
        unexplained = miss - appended
        unexplained_total += max(unexplained, 0)
        called = []
        if i + 1 < len(bodies):
            last_assistant = bodies[i + 1]["messages"][len(body["messages"])]
            called = [c["function"]["name"] for c in last_assistant.get("tool_calls") or ()]
        label = ", ".join(called) or ("(final answer)" if i + 1 == len(bodies) else "")
        print(
            f"{i + 1:>4}  {label:<28} {prompt:>7} {hit:>7} {miss:>7} {hit / prompt:6.1%} "
            f"{appended:>9} {unexplained:>11}"
        )

    ratio = sum_hit / sum_prompt
    steady_prompt = sum(e["usage"]["prompt_tokens"] for e in usage_events[1:])
    steady_hit = sum(e["usage"]["cache_hit_tokens"] for e in usage_events[1:])
    first_prompt = usage_events[0]["usage"]["cache_miss_tokens"]
    cache_state = (
        f"warm: {args.warm} earlier session(s) shared the system + tools prefix"
        if args.warm
        else "cold cache"
    )
    appended_later = sum(e["usage"]["cache_miss_tokens"] for e in usage_events[1:])
    # The prefix every session shares: tools + system prompt (not the first user turn).
    shared_body = {**bodies[0], "messages": bodies[0]["messages"][:1]}
    shared_prefix = tokens(len(render_prompt(shared_body).encode("utf-8", "surrogatepass")))
    best_cold = 1 - (first_prompt + appended_later) / sum_prompt

    print(
        f"\ntotals (server-reported): prompt {sum_prompt}, hit {sum_hit}, "
        f"miss {sum_prompt - sum_hit}"
    )
    print(f"  cache-hit ratio over the run          {ratio:7.2%}")
    print(f"  steps 2..{STEPS} only (cache warm)        {steady_hit / steady_prompt:7.2%}")
    print(
        f"  miss from step 1 ({'warm' if args.warm else 'cold'} cache)         {first_prompt:>7} tokens "
        f"({first_prompt / sum_prompt:.2%} of all prompt tokens)"
    )
    print(
        f"  miss from steps 2..{STEPS} (new content)  {appended_later:>7} tokens "
        f"({appended_later / sum_prompt:.2%})"
    )
    print(f"  unexplained misses (beyond appended)  {unexplained_total:>7} tokens")
    if not args.warm:
        print(
            f"  best possible ratio with a cold cache {best_cold:7.2%}  "
            "(step 1 all miss, later steps miss only what they append)"
        )
        print(
            f"  if the shared prefix (tools + system, {shared_prefix} tokens) were already cached "
            f"from an earlier session: {(sum_hit + shared_prefix) / sum_prompt:.2%} "
            "(measure it with --warm 2)"
        )
    print(
        f"  prefix changes reported by the run: {metrics['prefix_change_reason_counts'] or 'none'}"
        f" ({len(prefix_events)} prefix_changed events)"
    )
    breaks = metrics["cache_breaks"]
    print(
        f"  cache breaks the run's ledger found: {len(breaks)} "
        f"({sum(1 for b in breaks if b['reason'] == 'unexplained')} unexplained)"
    )

    if follow_usage and len(follow_requests) == 1:
        fu = follow_usage[0]
        prev_unit = render_prompt(
            {
                **bodies[-1],
                "messages": json.loads(follow_requests[0].body)["messages"][
                    : len(bodies[-1]["messages"]) + 1
                ],
            }
        ).encode("utf-8", "surrogatepass")
        follow_render = render_prompt(json.loads(follow_requests[0].body)).encode(
            "utf-8", "surrogatepass"
        )
        extends = follow_render.startswith(prev_unit)
        print(
            f"  follow-up `reasonix run -c` (new process): prompt {fu['prompt_tokens']}, "
            f"hit {fu['cache_hit_tokens']} ({fu['cache_hit_tokens'] / fu['prompt_tokens']:.2%}), "
            f"miss {fu['cache_miss_tokens']} (appended: "
            f"{fu['prompt_tokens'] - tokens(len(prev_unit)) if extends else '?'}); "
            f"extends the previous request + answer byte for byte: {'yes' if extends else 'NO'}"
        )

    # Reconciliation: metrics == sum of per-step usage == result usage.
    recon = (
        metrics["prompt_tokens"]
        == sum_prompt
        == result["usage"]["input_tokens"] + result["usage"]["cache_read_input_tokens"]
        and metrics["cache_hit_tokens"] == sum_hit == result["usage"]["cache_read_input_tokens"]
        and metrics["steps"] == STEPS == result["num_turns"]
    )
    print(
        f"  metrics file reconciles with per-step usage and the result line: {'yes' if recon else 'NO'}"
    )
    if problems:
        print("\nprefix breaks found by comparing consecutive request bodies:")
        for line in problems:
            print("  " + line)
    elif unexplained_total:
        print(
            "\nthe server missed more than was appended although every request extends the "
            "previous one byte for byte: see the per-step table"
        )
    else:
        print(
            "\nevery request is a byte-exact extension of the previous request plus its output; "
            "only newly appended content missed"
        )

    print(
        f"\nSUMMARY cache hit: {ratio:.2%} over {STEPS} steps ({cache_state}; {steady_hit / steady_prompt:.2%} "
        f"for steps 2..{STEPS}; {unexplained_total} unexplained miss tokens); "
        f"target >= {TARGET:.0%}: {verdict(ratio, TARGET, higher_is_better=True)}"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
