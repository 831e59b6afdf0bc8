-- Scheduled work and its history, and the removal checks of infringing pages.

-- What a schedule starts when it fires (a crawl, or the daily dedup run), and the cron tick it
-- fired last: the scheduler fires a schedule only by moving last_fired_at from the value it read
-- (compare-and-set), so two processes can never fire the same tick twice.
ALTER TABLE schedules ADD COLUMN kind TEXT NOT NULL DEFAULT 'crawl'
    CHECK (kind IN ('crawl', 'dedup'));
ALTER TABLE schedules ADD COLUMN last_fired_at INTEGER;
ALTER TABLE schedules ADD COLUMN updated_at INTEGER NOT NULL DEFAULT 0;
UPDATE schedules SET updated_at = created_at;

-- One row per crawl or dedup run, however it was started.
CREATE TABLE runs (
    id               INTEGER PRIMARY KEY,
    kind             TEXT    NOT NULL CHECK (kind IN ('crawl', 'dedup')),
    schedule_id      INTEGER REFERENCES schedules (id) ON DELETE SET NULL,
    -- The job that carries the run, when it runs through the queue.
    job_id           INTEGER REFERENCES jobs (id) ON DELETE SET NULL,
    trigger          TEXT    NOT NULL CHECK (trigger IN ('schedule', 'catch_up', 'manual')),
    state            TEXT    NOT NULL
        CHECK (state IN ('queued', 'running', 'succeeded', 'failed', 'cancelled')),
    -- The cron tick a scheduled run stands for.
    scheduled_for    INTEGER,
    created_at       INTEGER NOT NULL,
    started_at       INTEGER,
    finished_at      INTEGER,
    pages_checked    INTEGER NOT NULL DEFAULT 0,
    new_matches      INTEGER NOT NULL DEFAULT 0,
    matches_removed  INTEGER NOT NULL DEFAULT 0,
    errors           INTEGER NOT NULL DEFAULT 0,
    -- Kind-specific figures (a crawl's CrawlStats) as JSON; 'null' when none.
    stats            TEXT    NOT NULL DEFAULT 'null',
    error            TEXT,
    cancel_requested INTEGER NOT NULL DEFAULT 0 CHECK (cancel_requested IN (0, 1))
) STRICT;

CREATE INDEX runs_job_id ON runs (job_id);
-- Runs of one schedule (list_runs, and the foreign key when a schedule is deleted).
CREATE INDEX runs_schedule_id ON runs (schedule_id);
CREATE INDEX runs_kind_state ON runs (kind, state);

-- The latest removal check of a page: NULL until checked.
ALTER TABLE pages ADD COLUMN availability TEXT
    CHECK (availability IN ('online', 'gone', 'soft_removed', 'unreachable'));
ALTER TABLE pages ADD COLUMN availability_checked_at INTEGER;

-- When a match's page was found without the copy (status 'removed'); NULL otherwise.
ALTER TABLE matches ADD COLUMN removed_at INTEGER;

-- Every removal check, kept as evidence of when a copy was seen and when it was gone.
CREATE TABLE page_checks (
    id           INTEGER PRIMARY KEY,
    page_id      INTEGER NOT NULL REFERENCES pages (id) ON DELETE CASCADE,
    run_id       INTEGER REFERENCES runs (id) ON DELETE SET NULL,
    checked_at   INTEGER NOT NULL,
    availability TEXT    NOT NULL
        CHECK (availability IN ('online', 'gone', 'soft_removed', 'unreachable')),
    http_status  INTEGER,
    detail       TEXT    NOT NULL
) STRICT;

CREATE INDEX page_checks_page_id ON page_checks (page_id, checked_at);
