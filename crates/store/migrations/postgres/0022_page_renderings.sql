-- Evidence of what the browser showed: for a page text read from the page as headless Chromium
-- rendered it (its scripts run), the rendered DOM and the responses its scripts received,
-- beside the raw response in page_captures.

-- One row per rendered capture. The DOM is kept gzip-compressed with the SHA-256 of the
-- uncompressed UTF-8 bytes computed when it was stored. It lives and dies with its capture
-- (pruned with it). Captures stored before this migration, and of pages read without the
-- browser, have none.
CREATE TABLE page_renderings (
    page_id            BIGINT NOT NULL,
    content_hash       TEXT NOT NULL,
    -- The browser's product and version, e.g. HeadlessChrome/142.0.7444.175.
    browser            TEXT NOT NULL,
    -- How long the DOM had to stay unchanged to count as settled, and how long it took.
    settle_quiet_ms    BIGINT NOT NULL,
    settled_after_ms   BIGINT NOT NULL,
    rendered_at        TIMESTAMPTZ NOT NULL,
    -- Responses over the crawler's count cap: not kept, only counted.
    responses_not_kept BIGINT NOT NULL,
    dom_sha256         TEXT NOT NULL,
    dom_size           BIGINT NOT NULL,
    -- How `dom` is compressed: 'gzip'.
    compression        TEXT NOT NULL,
    dom                BYTEA NOT NULL,
    PRIMARY KEY (page_id, content_hash),
    FOREIGN KEY (page_id, content_hash) REFERENCES page_captures (page_id, content_hash)
        ON DELETE CASCADE
);
ALTER TABLE page_renderings ALTER COLUMN dom SET STORAGE EXTERNAL;

-- The responses a rendered page's scripts received (scripts, XHR, fetch, frames), in the order
-- they arrived. A body is kept (gzip, with its SHA-256) unless its load failed or it was over a
-- cap; body_note then says why.
CREATE TABLE page_subresponses (
    page_id       BIGINT NOT NULL,
    content_hash  TEXT NOT NULL,
    seq           BIGINT NOT NULL,
    url           TEXT NOT NULL,
    resource_type TEXT NOT NULL,
    http_status   BIGINT NOT NULL,
    -- Array of [name, value] pairs.
    headers       JSONB NOT NULL,
    mime_type     TEXT NOT NULL,
    -- 1 when the body is the text Chromium decoded, kept as UTF-8; 0 for bytes as received.
    decoded_text  BIGINT NOT NULL,
    body_note     TEXT,
    body_sha256   TEXT,
    body_size     BIGINT,
    compression   TEXT,
    body          BYTEA,
    PRIMARY KEY (page_id, content_hash, seq),
    FOREIGN KEY (page_id, content_hash) REFERENCES page_renderings (page_id, content_hash)
        ON DELETE CASCADE
);
ALTER TABLE page_subresponses ALTER COLUMN body SET STORAGE EXTERNAL;
