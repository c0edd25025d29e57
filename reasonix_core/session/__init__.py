"""The session core (docs/ARCHITECTURE.md, "Session core"): the composition root above
agent/, coordinator/, goal/, subagent/ and checkpoint/. Kept empty: importing the
package imports none of its modules."""
