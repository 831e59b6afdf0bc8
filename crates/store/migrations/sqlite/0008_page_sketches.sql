-- Incremental matching: a small sample of each page's text (copytrace_fingerprint::sketch),
-- kept with the content hash and sketch version it was made from, so works added later find
-- the stored pages that may copy them without reading any page text. A sketch whose hash is
-- not the page's current one is out of date and ignored.
CREATE TABLE page_sketches (
    page_id      INTEGER PRIMARY KEY REFERENCES pages (id) ON DELETE CASCADE,
    content_hash TEXT    NOT NULL,
    version      INTEGER NOT NULL CHECK (version >= 0),
    -- The sampled n-gram hashes as little-endian u32s, sorted.
    sample       BLOB    NOT NULL
) STRICT;
