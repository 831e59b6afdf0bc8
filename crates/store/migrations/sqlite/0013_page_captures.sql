-- Evidence that holds up: the raw response each page text was extracted from, and the evidence
-- packages written for matches.

-- One row per (page, text): the first fetch that gave the page this text. The body is kept as
-- received (after HTTP content decoding, before charset decoding), gzip-compressed, with the
-- SHA-256 of the uncompressed bytes computed when it was stored. A page keeps the capture of its
-- current text and those of earlier texts some match's evidence points into (like page_texts);
-- the others are dropped when a re-crawl replaces the text or a verdict moves the evidence.
-- Pages stored before this migration have none.
CREATE TABLE page_captures (
    page_id       INTEGER NOT NULL REFERENCES pages (id) ON DELETE CASCADE,
    content_hash  TEXT    NOT NULL,
    requested_url TEXT    NOT NULL,
    final_url     TEXT    NOT NULL,
    http_status   INTEGER NOT NULL,
    -- JSON array of [name, value] pairs, in the order received.
    headers       TEXT    NOT NULL,
    encoding      TEXT    NOT NULL,
    fetched_at    INTEGER NOT NULL,
    body_sha256   TEXT    NOT NULL,
    body_size     INTEGER NOT NULL,
    -- How `body` is compressed: 'gzip'.
    compression   TEXT    NOT NULL,
    body          BLOB    NOT NULL,
    PRIMARY KEY (page_id, content_hash)
) STRICT;

-- Every evidence package written, with the SHA-256 of its manifest, so `evidence verify` can
-- tell a rewritten manifest from the one Copytrace wrote. No foreign key on match_id: the record
-- is an audit log and outlives a match deleted later.
CREATE TABLE evidence_packages (
    id              INTEGER PRIMARY KEY,
    match_id        INTEGER NOT NULL,
    manifest_sha256 TEXT    NOT NULL,
    created_at      INTEGER NOT NULL
) STRICT;
CREATE INDEX evidence_packages_by_match ON evidence_packages (match_id);
