"""The engine layer: cards, array layouts, meld kernels, the step machine and
its legal-action query, the action ids and observation vector (`actions`),
the play drivers, replay, seeded generators and the bot contract's types.
It writes fixed-layout int64 rows; :mod:`arena.run.schema` names their columns.

Everything here is numba kernels over int64/float64 arrays plus the thin
typed Python around them.  The engine imports only the settings layer
(``arena.settings``) above it, never the bots, the run or the interfaces:
a bot reaches the engine only through the contract in
:mod:`arena.engine.contract`.
"""
