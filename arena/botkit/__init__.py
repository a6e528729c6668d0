"""The bots layer's support: bots in this process (:mod:`arena.botkit.bot`), the
helpers strategies share (:mod:`arena.botkit.lib`) and search support for
bots that look ahead (:mod:`arena.botkit.search`).

External programs and the sandbox are the same layer's :mod:`arena.external`;
the built-in strategies are the top-level ``bots`` package.  Loading any kind
of bot reference is the layer below both, :mod:`arena.loading`.
"""
