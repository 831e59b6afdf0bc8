-- Copytrace schema for SQLite.
--
-- Conventions shared with the PostgreSQL schema, so both backends behave the same:
-- * timestamps are INTEGER microseconds since the Unix epoch, UTC (PostgreSQL: timestamptz, which
--   also keeps microseconds); they sort and compare as numbers;
-- * 64-bit SimHash values are stored as the signed bit pattern of the u64 (INTEGER / bigint);
-- * JSON documents are TEXT written by serde_json (PostgreSQL: jsonb);
-- * enumerations are lower-case TEXT guarded by CHECK constraints;
-- * text is compared and ordered bytewise (SQLite BINARY; PostgreSQL COLLATE "C").
-- Tables are STRICT so a wrongly typed bind fails instead of being silently coerced.

-- ----- fingerprint library -----

CREATE TABLE rights_holders (
    id         INTEGER PRIMARY KEY,
    name       TEXT    NOT NULL UNIQUE,
    created_at INTEGER NOT NULL
) STRICT;

CREATE TABLE works (
    id                  INTEGER PRIMARY KEY,
    rights_holder_id    INTEGER NOT NULL REFERENCES rights_holders (id),
    external_id         TEXT    NOT NULL,
    title               TEXT    NOT NULL,
    content             TEXT    NOT NULL,
    -- Byte length of content, kept so listing works never reads the texts.
    content_len         INTEGER NOT NULL,
    content_hash        TEXT    NOT NULL,
    fingerprint_version INTEGER NOT NULL,
    created_at          INTEGER NOT NULL,
    updated_at          INTEGER NOT NULL,
    UNIQUE (rights_holder_id, external_id)
) STRICT;

-- The UNIQUE (work_id, ordinal) index also serves every lookup by work_id (leftmost column), so
-- there is no separate index on work_id: it would only slow down segment replacement.
CREATE TABLE work_segments (
    id           INTEGER PRIMARY KEY,
    work_id      INTEGER NOT NULL REFERENCES works (id) ON DELETE CASCADE,
    ordinal      INTEGER NOT NULL,
    start_offset INTEGER NOT NULL,
    end_offset   INTEGER NOT NULL,
    simhash      INTEGER NOT NULL,
    UNIQUE (work_id, ordinal),
    CHECK (0 <= start_offset AND start_offset <= end_offset)
) STRICT;

-- ----- page library -----

CREATE TABLE sites (
    id         INTEGER PRIMARY KEY,
    host       TEXT    NOT NULL UNIQUE,
    created_at INTEGER NOT NULL
) STRICT;

CREATE TABLE pages (
    id           INTEGER PRIMARY KEY,
    site_id      INTEGER NOT NULL REFERENCES sites (id),
    url          TEXT    NOT NULL UNIQUE,
    title        TEXT,
    text         TEXT    NOT NULL,
    content_hash TEXT    NOT NULL,
    http_status  INTEGER NOT NULL,
    first_seen   INTEGER NOT NULL,
    last_seen    INTEGER NOT NULL,
    -- content_hash the last completed match ran on; NULL when never matched or marked stale.
    matched_hash TEXT
) STRICT;

CREATE INDEX pages_site_id ON pages (site_id);

-- Keeps "which pages are due for matching" cheap when almost every page is already matched.
-- The WHERE clause must stay identical to the one in pages_to_match for the planner to use it.
CREATE INDEX pages_due_for_matching ON pages (id)
    WHERE matched_hash IS NULL OR matched_hash <> content_hash;

-- ----- match library -----

CREATE TABLE matches (
    id          INTEGER PRIMARY KEY,
    page_id     INTEGER NOT NULL REFERENCES pages (id) ON DELETE CASCADE,
    work_id     INTEGER NOT NULL REFERENCES works (id) ON DELETE CASCADE,
    score       REAL    NOT NULL,
    coverage    REAL    NOT NULL,
    containment REAL    NOT NULL,
    method      TEXT    NOT NULL,
    status      TEXT    NOT NULL DEFAULT 'open'
        CHECK (status IN ('open', 'notice_sent', 'removed', 'dismissed')),
    first_seen  INTEGER NOT NULL,
    last_seen   INTEGER NOT NULL,
    UNIQUE (page_id, work_id)
) STRICT;

-- Per-work listings and "mark pages matched against this work as stale".
CREATE INDEX matches_work_id ON matches (work_id);

CREATE TABLE evidence (
    id         INTEGER PRIMARY KEY,
    match_id   INTEGER NOT NULL REFERENCES matches (id) ON DELETE CASCADE,
    ordinal    INTEGER NOT NULL,
    page_start INTEGER NOT NULL,
    page_end   INTEGER NOT NULL,
    work_start INTEGER NOT NULL,
    work_end   INTEGER NOT NULL,
    UNIQUE (match_id, ordinal)
) STRICT;

-- ----- operations -----

CREATE TABLE jobs (
    id           INTEGER PRIMARY KEY,
    kind         TEXT    NOT NULL,
    payload      TEXT    NOT NULL,
    dedup_key    TEXT,
    state        TEXT    NOT NULL DEFAULT 'queued'
        CHECK (state IN ('queued', 'running', 'done', 'dead')),
    attempts     INTEGER NOT NULL DEFAULT 0,
    max_attempts INTEGER NOT NULL CHECK (max_attempts >= 1),
    run_at       INTEGER NOT NULL,
    lease_until  INTEGER,
    last_error   TEXT,
    created_at   INTEGER NOT NULL,
    updated_at   INTEGER NOT NULL
) STRICT;

CREATE INDEX jobs_state_run_at ON jobs (state, run_at);

-- At most one pending (queued or running) job per dedup key, enforced by the database so that
-- concurrent enqueuers cannot both win.
CREATE UNIQUE INDEX jobs_pending_dedup_key ON jobs (dedup_key)
    WHERE dedup_key IS NOT NULL AND state IN ('queued', 'running');

CREATE TABLE schedules (
    id         INTEGER PRIMARY KEY,
    name       TEXT    NOT NULL UNIQUE,
    cron       TEXT    NOT NULL,
    timezone   TEXT    NOT NULL,
    seeds      TEXT    NOT NULL,
    config     TEXT    NOT NULL,
    enabled    INTEGER NOT NULL DEFAULT 1 CHECK (enabled IN (0, 1)),
    owner      TEXT,
    created_at INTEGER NOT NULL
) STRICT;

CREATE TABLE users (
    id               INTEGER PRIMARY KEY,
    -- Always stored lower-cased by the application, so equality is a case-insensitive lookup.
    email            TEXT    NOT NULL UNIQUE,
    password_hash    TEXT    NOT NULL,
    role             TEXT    NOT NULL
        CHECK (role IN ('admin', 'operator', 'analyst', 'rights_holder')),
    rights_holder_id INTEGER REFERENCES rights_holders (id),
    created_at       INTEGER NOT NULL,
    CHECK ((role = 'rights_holder') = (rights_holder_id IS NOT NULL))
) STRICT;
