"""The league: participants submit bots over the web, the arena plays them, a live leaderboard ranks them.

* :mod:`arena.league.config`     - ``league.toml``: rules, games per pairing, house bots, limits;
* :mod:`arena.league.db`         - the SQLite database: connections, transactions, migrations, checks, backups;
* :mod:`arena.league.migrations` - the schema, one numbered step per version;
* :mod:`arena.league.core`       - users and tokens, submissions, withdrawals, the queue (no HTTP);
* :mod:`arena.league.uploads`    - whether an upload is an acceptable bot (file, policy, EAAI-kit player,
  command), and how its bytes are stored;
* :mod:`arena.league.checks`     - the checks of submissions: beside the games, time-limited, one per user;
* :mod:`arena.league.scheduler`  - the background process: pairings through the runner, ratings;
* :mod:`arena.league.web`        - Starlette routes: pages and the JSON API (included in the one web app,
  :mod:`arena.web.server`);
* :mod:`arena.league.forms`      - request bodies, read under a byte cap, then parsed: JSON, urlencoded and
  multipart forms (the submit page's file);
* :mod:`arena.league.file_kinds` - an upload's kind told by its file name's suffix (the page and the client);
* :mod:`arena.league.client`     - ``arena submit FILE --to http://...``.

The commands ``arena league init|add-user|revoke-user|rotate-token|backup|restore|serve`` are in
:mod:`arena.cli.league`
(an interface: ``serve`` runs the one web app with the league in it).

The web side reads and writes only the database; the games live in the
league's run folders (``DIR/runs/rNNN``), written by the scheduler through
:func:`arena.run.run_tournament`.
"""
