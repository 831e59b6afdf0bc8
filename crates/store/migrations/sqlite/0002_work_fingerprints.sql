-- Document-level fingerprints of each work, one row per algorithm, each with the version of
-- the algorithm that produced it. A reader compares the stored versions with the algorithms it
-- runs and re-fingerprints a work whose versions differ, so fingerprints of two algorithm
-- versions are never compared with each other.
CREATE TABLE work_fingerprints (
    work_id     INTEGER NOT NULL REFERENCES works (id) ON DELETE CASCADE,
    algorithm   TEXT    NOT NULL,
    version     INTEGER NOT NULL,
    -- The fingerprint as JSON written by serde_json (PostgreSQL: jsonb).
    fingerprint TEXT    NOT NULL,
    PRIMARY KEY (work_id, algorithm),
    CHECK (algorithm <> ''),
    CHECK (version >= 0)
) STRICT;
