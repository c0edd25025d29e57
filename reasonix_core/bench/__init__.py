"""e2ebench (seed 003): tasks run end to end by ``reasonix run``, verified, and measured.

``reasonix bench run`` copies a task's starting files to a fresh folder, runs the
agent there as a real subprocess (stream-json and ``--metrics``), runs the task's
verifier, and writes a trajectory per run plus a summary; ``--record`` /
``--replay`` capture and serve the provider's answers as cassettes.
``reasonix bench report`` summarises and compares run directories. See
docs/E2EBENCH.md.

Modules: :mod:`task` (task.toml and the corpus), :mod:`cassette` (the cassette
format, request normalisation, the first differing byte), :mod:`loopback` (the
recording proxy and the replay server), :mod:`loopback_http` (the loopback HTTP
server under them, which the test kit's fixture server stands on too),
:mod:`trajectory` (one run's record from its stream-json and metrics),
:mod:`runner` (arms, runs, jobs, the cost cap), :mod:`summary` (aggregates,
text and the side-by-side diff). Nothing here is imported by ``reasonix run``.
"""
