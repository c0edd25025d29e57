"""``reasonix run --input-format stream-json``: a session driven by JSON lines on
stdin, as Claude Code's print mode is, so programs built on ``claude-agent-sdk``
run Reasonix as their CLI (``ClaudeAgentOptions(cli_path=...)``).

The surface drives the session core (:mod:`reasonix_core.session`) and wires
nothing itself: user messages become turns (``Session.prompt``), the output is
:mod:`reasonix_core.claude_stream`'s lines, approvals go to the program through
the control protocol (:mod:`.approver`), an ``interrupt`` cancels the turn.

- :mod:`.input_lines`: what one stdin line is (a user message, a control request
  or response), or why it is skipped;
- :mod:`.control`: the one writer of stdout and the control requests Reasonix sends;
- :mod:`.approver`: the session's Approver as ``can_use_tool`` requests;
- :mod:`.driver`: the session, its turns and the answers to control requests.
"""

from reasonix_core.stream_session.driver import StreamOptions, run_stream_session

__all__ = ["StreamOptions", "run_stream_session"]
