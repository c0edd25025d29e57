"""Two-model collaboration (seed 000 §3.5): a planner beside the executor.

- :mod:`.routes` decides, from the raw user text and trusted turn metadata,
  whether a turn goes straight to the executor (the default) or through the
  planner first;
- :mod:`.submit_plan` is the planner's one delivery channel;
- :mod:`.plans` keeps plans waiting for approval in the session;
- :mod:`.coordinator` is the :class:`~reasonix_core.agent.runner.Runner` that
  drives both agents; :mod:`.build` assembles the planner from configuration.

docs/MODES.md describes the routes and the fail-closed rules.
"""
