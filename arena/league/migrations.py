"""The league database's schema, as numbered migration steps.

The database's ``PRAGMA user_version`` is the number of steps applied.
:func:`arena.league.db.migrate` applies the missing ones in order, each in
its own transaction, so a database is always at one version.  A step is
never edited once released: a change of schema is a new step at the end.
"""

from __future__ import annotations

MIGRATIONS: tuple[str, ...] = (
    # 1: users, sessions, bots, versions, pairings, state.
    """
    CREATE TABLE users (
        id          INTEGER PRIMARY KEY,
        name        TEXT NOT NULL UNIQUE,
        token_hash  TEXT NOT NULL UNIQUE,           -- sha256 of the token; the token itself is never stored
        organizer   INTEGER NOT NULL DEFAULT 0 CHECK (organizer IN (0, 1)),
        created     TEXT NOT NULL
    );
    CREATE TABLE sessions (
        id_hash     TEXT PRIMARY KEY,               -- sha256 of the cookie value
        user_id     INTEGER NOT NULL REFERENCES users(id),
        csrf        TEXT NOT NULL,
        expires     REAL NOT NULL
    );
    CREATE TABLE bots (
        id              INTEGER PRIMARY KEY,
        name            TEXT NOT NULL UNIQUE,
        owner_id        INTEGER REFERENCES users(id),   -- NULL: a house bot
        published       INTEGER NOT NULL DEFAULT 0 CHECK (published IN (0, 1)),
        withdrawn       INTEGER NOT NULL DEFAULT 0 CHECK (withdrawn IN (0, 1)),
        current_version INTEGER REFERENCES versions(id), -- the version on the leaderboard
        created         TEXT NOT NULL
    );
    CREATE TABLE versions (
        id           INTEGER PRIMARY KEY,
        bot_id       INTEGER NOT NULL REFERENCES bots(id),
        number       INTEGER NOT NULL,
        kind         TEXT NOT NULL CHECK (kind IN ('file', 'cmd', 'builtin')),
        spec         TEXT NOT NULL,                 -- file: path under the league folder; cmd: command; builtin: name
        run_name     TEXT NOT NULL UNIQUE,          -- the bot's name in the run store
        sha256       TEXT NOT NULL,
        size         INTEGER NOT NULL,
        status       TEXT NOT NULL
                     CHECK (status IN ('checking', 'playing', 'rated', 'refused', 'retired', 'withdrawn')),
        reason       TEXT NOT NULL DEFAULT '',
        submitted_by INTEGER REFERENCES users(id),
        created      TEXT NOT NULL,
        created_ts   REAL NOT NULL,
        UNIQUE (bot_id, number)
    );
    CREATE INDEX versions_by_status ON versions(status);
    CREATE INDEX versions_by_submitter ON versions(submitted_by, created_ts);
    CREATE TABLE pairings (
        id        INTEGER PRIMARY KEY,
        a         INTEGER NOT NULL REFERENCES versions(id),
        b         INTEGER NOT NULL REFERENCES versions(id),
        round     INTEGER NOT NULL,                 -- run folder runs/rNNN; round 0 is the first meeting
        priority  INTEGER NOT NULL,                 -- higher first: new bots before extra games
        state     TEXT NOT NULL CHECK (state IN ('queued', 'running', 'done', 'cancelled')),
        target    INTEGER NOT NULL,                 -- games planned
        games     INTEGER NOT NULL DEFAULT 0,       -- games stored, read back from the run store
        result    TEXT NOT NULL DEFAULT '',
        created   TEXT NOT NULL,
        finished  TEXT,
        UNIQUE (a, b, round)
    );
    CREATE INDEX pairings_by_state ON pairings(state, priority);
    CREATE TABLE state (
        key    TEXT PRIMARY KEY,
        value  TEXT NOT NULL
    );
    """,
    # 2: revoked users: the row stays (their versions and games point to it, and the name stays taken so
    # nobody else can take it over); the token hash is replaced and every session deleted.
    """
    ALTER TABLE users ADD COLUMN revoked TEXT;          -- when the user was revoked; NULL: active
    """,
)
