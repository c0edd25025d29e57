"""``reasonix serve``: the Reasonix app in a browser, behind authentication (docs/SERVE.md).

The server is a surface that wires no session: each browser connection starts the
ordinary app (``python -m reasonix_tui``) as a child process, which drives the
session core as it does in a terminal. This package's modules:

- :mod:`.password`: the salted scrypt hash ``--set-password`` stores (stdlib only);
- :mod:`.guard`: the Host, Origin, token, cookie and backoff rules (stdlib only);
- :mod:`.server`: the aiohttp application around textual-serve (the ``serve`` extra).

Nothing here is imported unless ``reasonix serve`` runs.
"""
