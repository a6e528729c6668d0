"""The league database's schema, as numbered migration steps.

The database's ``PRAGMA user_version`` is the number of steps applied.
:func:`arena.league.db.migrate` applies the missing ones in order, each in
its own transaction, so a database is always at one version.  A step is
never edited once released: a change of schema is a new step at the end.

A step that changes a CHECK constraint rebuilds the table the way SQLite
documents (``ALTER TABLE``, "making other kinds of table schema changes"):
create the new table, copy the rows, drop the old one, rename the new one,
make its indexes again.  :func:`arena.league.db.migrate` runs every step with
foreign keys off (so dropping a table that other rows point to deletes
nothing) and runs ``PRAGMA foreign_key_check`` before it commits.
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
    # 3: uploaded EAAI-kit players ('eaai': spec is "bots/<hash>/classes:<class>") and trained policies
    # ('policy': spec is the policy file under bots/<hash>/) as kinds of version: the CHECK of versions.kind
    # changes, so the table is rebuilt and its rows copied as they are.
    """
    CREATE TABLE versions_new (
        id           INTEGER PRIMARY KEY,
        bot_id       INTEGER NOT NULL REFERENCES bots(id),
        number       INTEGER NOT NULL,
        kind         TEXT NOT NULL CHECK (kind IN ('file', 'cmd', 'builtin', 'eaai', 'policy')),
        spec         TEXT NOT NULL,                 -- file, eaai, policy: under the league folder; cmd: command
        run_name     TEXT NOT NULL UNIQUE,
        sha256       TEXT NOT NULL,
        size         INTEGER NOT NULL,              -- bytes the upload takes on the server (the quota's unit)
        status       TEXT NOT NULL
                     CHECK (status IN ('checking', 'playing', 'rated', 'refused', 'retired', 'withdrawn')),
        reason       TEXT NOT NULL DEFAULT '',
        submitted_by INTEGER REFERENCES users(id),
        created      TEXT NOT NULL,
        created_ts   REAL NOT NULL,
        UNIQUE (bot_id, number)
    );
    INSERT INTO versions_new (id, bot_id, number, kind, spec, run_name, sha256, size, status, reason, submitted_by,
                              created, created_ts)
        SELECT id, bot_id, number, kind, spec, run_name, sha256, size, status, reason, submitted_by, created,
               created_ts FROM versions;
    DROP TABLE versions;
    ALTER TABLE versions_new RENAME TO versions;
    CREATE INDEX versions_by_status ON versions(status);
    CREATE INDEX versions_by_submitter ON versions(submitted_by, created_ts);
    """,
)
