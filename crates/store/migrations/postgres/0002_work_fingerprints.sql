-- Document-level fingerprints of each work, one row per algorithm, each with the version of
-- the algorithm that produced it. A reader compares the stored versions with the algorithms it
-- runs and re-fingerprints a work whose versions differ, so fingerprints of two algorithm
-- versions are never compared with each other. (SQLite: migrations/sqlite/0002.)
CREATE TABLE work_fingerprints (
    work_id     BIGINT NOT NULL REFERENCES works (id) ON DELETE CASCADE,
    algorithm   TEXT COLLATE "C" NOT NULL,
    version     BIGINT NOT NULL,
    -- The fingerprint as serialized by the fingerprint crate; the store does not interpret it.
    fingerprint JSONB NOT NULL,
    PRIMARY KEY (work_id, algorithm),
    CHECK (algorithm <> ''),
    CHECK (version >= 0)
);
