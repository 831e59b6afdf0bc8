-- Real catalogs: who wrote a work and when it was published, its chapters, its withdrawal, and
-- the hosts a rights holder licensed to publish it.

ALTER TABLE works ADD COLUMN author TEXT;
ALTER TABLE works ADD COLUMN published_at INTEGER;
-- A withdrawn work ('library rm') leaves every index and is never matched again, but the row
-- stays so its past matches stay visible (as 'withdrawn'), never silently deleted.
ALTER TABLE works ADD COLUMN status TEXT NOT NULL DEFAULT 'active'
    CHECK (status IN ('active', 'withdrawn'));
ALTER TABLE works ADD COLUMN withdrawn_at INTEGER;

-- The ordered chapters of a work, as byte ranges of works.content that tile it. A work without
-- detected chapters has none and is one unit.
CREATE TABLE work_chapters (
    work_id      INTEGER NOT NULL REFERENCES works (id) ON DELETE CASCADE,
    ordinal      INTEGER NOT NULL,
    title        TEXT    NOT NULL,
    start_offset INTEGER NOT NULL,
    end_offset   INTEGER NOT NULL,
    PRIMARY KEY (work_id, ordinal),
    CHECK (0 <= start_offset AND start_offset <= end_offset)
) STRICT;

-- Hosts (with their subdomains) that may publish a rights holder's works: all of them when
-- work_id is NULL, else that one work. A match on such a host reads as 'licensed' and is left
-- out of reported infringements.
CREATE TABLE licensed_hosts (
    id               INTEGER PRIMARY KEY,
    rights_holder_id INTEGER NOT NULL REFERENCES rights_holders (id) ON DELETE CASCADE,
    work_id          INTEGER REFERENCES works (id) ON DELETE CASCADE,
    host             TEXT    NOT NULL CHECK (host <> ''),
    created_at       INTEGER NOT NULL
) STRICT;

-- NULL work ids are distinct in a UNIQUE constraint: the expression makes holder-wide rows unique.
CREATE UNIQUE INDEX licensed_hosts_unique
    ON licensed_hosts (rights_holder_id, COALESCE(work_id, 0), host);
CREATE INDEX licensed_hosts_work_id ON licensed_hosts (work_id);
