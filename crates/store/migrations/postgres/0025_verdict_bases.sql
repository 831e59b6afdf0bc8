-- Mirror pages verified once: each verdict the matcher gave, with the library generation and
-- the matcher it was found with (see the SQLite migration).
CREATE TABLE page_verdicts (
    page_id      BIGINT PRIMARY KEY REFERENCES pages (id) ON DELETE CASCADE,
    content_hash TEXT NOT NULL,
    generation   BIGINT NOT NULL,
    matcher      TEXT NOT NULL,
    matches      BIGINT NOT NULL CHECK (matches >= 0),
    recorded_at  TIMESTAMPTZ NOT NULL
);
CREATE INDEX page_verdicts_by_text ON page_verdicts (content_hash, generation, page_id);
