-- Incremental matching: a small sample of each page's text (see the SQLite migration).
CREATE TABLE page_sketches (
    page_id      BIGINT PRIMARY KEY REFERENCES pages (id) ON DELETE CASCADE,
    content_hash TEXT NOT NULL,
    version      BIGINT NOT NULL CHECK (version >= 0),
    -- The sampled n-gram hashes as little-endian u32s, sorted.
    sample       BYTEA NOT NULL
);
