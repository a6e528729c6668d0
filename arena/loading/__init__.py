"""Loading bots: the one loader of every :class:`~arena.settings.botref.BotRef`, and ``arena check-bot``.

This layer sits above both :mod:`arena.botkit` (bots in this process) and
:mod:`arena.external` (bots in their own process, behind the wall), so
neither of those imports the other's loader:

* :mod:`arena.loading.load`: :func:`~arena.loading.load.load` (one branch
  per kind of reference), ``load_bot`` (a spec string), ``load_bots`` (every
  bot of a config);
* :mod:`arena.loading.check`: ``arena check-bot``, the conformance check of
  an external bot against built-in opponents.
"""
