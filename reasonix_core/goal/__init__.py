"""Goal mode (docs/MODES.md#goal-mode): a standing objective the host drives in
ordinary turns until it is complete, blocked or a bound is reached.

- :mod:`.state`: the goal projection over the session's append-only records;
- :mod:`.tools`: ``create_goal``, ``get_goal``, ``update_goal``;
- :mod:`.driver`: admits one ordinary top-level turn at a time while armed.
"""
