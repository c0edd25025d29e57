"""Subagents (seed 000 §3.10-§3.17): children the agent delegates to."""
