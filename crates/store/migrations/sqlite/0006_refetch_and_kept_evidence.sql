-- Conditional re-fetch, and evidence that survives a re-crawl.

-- The HTTP validators (ETag, Last-Modified) of the fetch that gave the stored text. A re-crawl
-- sends them back (If-None-Match, If-Modified-Since), so an unchanged page costs a 304 instead
-- of its body. They always belong to the stored text: a 304 answered to them means the stored
-- text is still what the page says. NULL when the server sent none.
ALTER TABLE pages ADD COLUMN etag TEXT;
ALTER TABLE pages ADD COLUMN last_modified TEXT;

-- The content_hash of the page text a match's evidence offsets point into. It equals the
-- page's content_hash unless the page changed since the match was last found; that older text
-- is then kept in page_texts, so the evidence still reads what was copied. Matches recorded
-- before this column existed are taken to point into the stored text.
ALTER TABLE matches ADD COLUMN evidence_hash TEXT NOT NULL DEFAULT '';
UPDATE matches SET evidence_hash = (SELECT p.content_hash FROM pages p WHERE p.id = matches.page_id);

-- Superseded texts of a page that some match's evidence still points into. A text is kept when
-- a re-crawl replaces it and dropped once no evidence refers to it any more.
CREATE TABLE page_texts (
    page_id      INTEGER NOT NULL REFERENCES pages (id) ON DELETE CASCADE,
    content_hash TEXT    NOT NULL,
    title        TEXT,
    text         TEXT    NOT NULL,
    -- When a re-crawl replaced it.
    archived_at  INTEGER NOT NULL,
    PRIMARY KEY (page_id, content_hash)
) STRICT;
