-- Mirror pages verified once. Pirate mirrors copy whole pages across sites; a page whose text
-- (content hash) is that of a page already verified reuses that page's verdict instead of being
-- matched again, but only a verdict found by the same matcher against the library as it is now.
-- So each verdict the matcher gave is recorded with what it was found against:
--
--   generation   the library generation (`library_state`, 0024) the matcher reflected;
--   matcher      the matcher's identity: its version and settings;
--   matches      how many matches the verdict had;
--   recorded_at  when it was recorded: its matches are the page's rows whose evidence points
--                into `content_hash` and that were last seen at or after it (a row the verdict
--                did not find is told apart by the count).
--
-- A page has no row when its verdict was not the matcher's (an alias's empty verdict), when its
-- matches were handed over to or from another page, or when it was matched before this table
-- existed (it is matched once more). A table of its own, not columns of `pages`: on SQLite a
-- column stored after the page's text is read by walking the text's overflow pages.
CREATE TABLE page_verdicts (
    page_id      INTEGER PRIMARY KEY REFERENCES pages (id) ON DELETE CASCADE,
    content_hash TEXT    NOT NULL,
    generation   INTEGER NOT NULL,
    matcher      TEXT    NOT NULL,
    matches      INTEGER NOT NULL CHECK (matches >= 0),
    recorded_at  INTEGER NOT NULL
) STRICT;
-- The verified pages with a text, at the library's generation, in page order.
CREATE INDEX page_verdicts_by_text ON page_verdicts (content_hash, generation, page_id);
