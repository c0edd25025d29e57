"""Run the fixture server (Chat dialect) as a process, for terminal end-to-end checks and demos.

    python -m reasonix_testkit.serve --port 8765 [--key sk-test] [--flavour openai]

Every request is answered by a small deterministic responder: it echoes the
last user message ("You said: ..."), and when the message contains
"list files" it first calls ``ls`` and then summarises; "write a note" writes
NOTE.md (a call that needs approval). Prints the base URL on
its first line and runs until killed.
"""

from __future__ import annotations

import argparse
import json
import signal
import sys
import threading

from reasonix_testkit import ChatDialect, FixtureServer, RecordedRequest, Reply, ToolCallSpec


def demo_responder(request: RecordedRequest) -> Reply:
    body = request.json or {}
    messages = body.get("messages") or []
    last = messages[-1] if messages else {}
    calls = next(
        (m.get("tool_calls") or [] for m in reversed(messages) if m.get("role") == "assistant"), []
    )
    if last.get("role") == "tool" and any(c["function"]["name"] == "write_file" for c in calls):
        return Reply(content="The note is written.")
    if last.get("role") == "tool":
        return Reply(
            reasoning="The listing is in.",
            content="Here is what I found:\n\n"
            + "\n".join(
                f"- `{line.strip()}`" for line in str(last.get("content", "")).splitlines()[:10]
            ),
        )
    text = str(last.get("content", "")).split("<workspace-context>")[0].strip()
    if "write a note" in text.lower():
        return Reply(
            reasoning="I will write the note.",
            tool_calls=[
                ToolCallSpec(
                    "write_file", json.dumps({"path": "NOTE.md", "content": "# Note\n\nHello.\n"})
                )
            ],
        )
    if "list files" in text.lower():
        return Reply(
            reasoning="I should look at the workspace.", tool_calls=[ToolCallSpec("ls", "{}")]
        )
    return Reply(reasoning="Echoing the user.", content=f"You said: **{text}**", chunk_size=4)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m reasonix_testkit.serve")
    parser.add_argument("--port", type=int, default=0)
    parser.add_argument("--key", default="sk-test")
    parser.add_argument("--flavour", default="deepseek", choices=("deepseek", "openai"))
    args = parser.parse_args(argv)
    server = FixtureServer(ChatDialect(args.flavour), api_key=args.key, port=args.port)
    server.responder = demo_responder
    server.start()
    sys.stdout.write(json.dumps({"base_url": server.base_url}) + "\n")
    sys.stdout.flush()
    stop = threading.Event()
    signal.signal(signal.SIGTERM, lambda *_: stop.set())
    try:
        stop.wait()
    except KeyboardInterrupt:
        pass
    server.stop()
    return 0


if __name__ == "__main__":
    sys.exit(main())
