-- Review with confidence gating: whether a match is reported is a decision, kept apart from
-- its life online (status: open, notice_sent, removed).
--
-- matches.review: pending (below the certainty gate, waiting for a person), confirmed
-- (reported), rejected (a false positive), licensed (the page may carry the work). Matches
-- recorded before this step were reported, so they start confirmed.
ALTER TABLE matches ADD COLUMN review TEXT NOT NULL DEFAULT 'confirmed'
    CHECK (review IN ('pending', 'confirmed', 'rejected', 'licensed'));

-- Every decision on a page × work pair: who, when, why, and on which text. It belongs to the
-- pair, not to the match row, which a re-match may delete and create again: the latest
-- decision of a person is applied to the pair whenever it is found again.
CREATE TABLE match_decisions (
    id           INTEGER PRIMARY KEY,
    page_id      INTEGER NOT NULL REFERENCES pages (id) ON DELETE CASCADE,
    work_id      INTEGER NOT NULL REFERENCES works (id) ON DELETE CASCADE,
    -- The match row decided on; it may be gone since (no foreign key).
    match_id     INTEGER,
    decision     TEXT    NOT NULL
        CHECK (decision IN ('pending', 'confirmed', 'rejected', 'licensed')),
    -- Taken by the certainty gate, not by a person.
    automatic    INTEGER NOT NULL DEFAULT 0 CHECK (automatic IN (0, 1)),
    actor        TEXT    NOT NULL,
    note         TEXT    NOT NULL DEFAULT '',
    -- The page text decided on, and how much of it was copied: a rejected pair is reported
    -- again only when the page changes substantially.
    content_hash TEXT    NOT NULL,
    copied_chars INTEGER NOT NULL,
    decided_at   INTEGER NOT NULL
) STRICT;

CREATE INDEX match_decisions_pair ON match_decisions (page_id, work_id, id);

-- A match dismissed before decisions were recorded was a person's rejection.
INSERT INTO match_decisions (page_id, work_id, match_id, decision, automatic, actor, note,
                             content_hash, copied_chars, decided_at)
SELECT page_id, work_id, id, 'rejected', 0, 'migration',
       'dismissed before review decisions were recorded', evidence_hash, copied_chars, last_seen
FROM matches WHERE status = 'dismissed';
UPDATE matches SET review = 'rejected', status = 'open', removed_at = NULL
WHERE status = 'dismissed';
