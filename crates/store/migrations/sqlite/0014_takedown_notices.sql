-- Takedown notices: one per rights holder and site, listing the confirmed matches it asks to
-- take down, with the text as rendered (what was sent is kept as it was sent).
CREATE TABLE notices (
    id               INTEGER PRIMARY KEY,
    rights_holder_id INTEGER NOT NULL REFERENCES rights_holders (id),
    -- The host the notice is for (its subdomains' pages included).
    site             TEXT    NOT NULL CHECK (site <> ''),
    lang             TEXT    NOT NULL CHECK (lang IN ('zh', 'en')),
    status           TEXT    NOT NULL DEFAULT 'draft'
        CHECK (status IN ('draft', 'sent', 'removal_verified', 'partially_removed', 'ignored')),
    body             TEXT    NOT NULL,
    created_at       INTEGER NOT NULL,
    sent_at          INTEGER,
    -- When the removal check last moved its status (removal verified, partially removed).
    status_changed_at INTEGER
) STRICT;

CREATE INDEX notices_holder_site ON notices (rights_holder_id, site);

-- The matches a notice lists. A match can be in several notices (a reminder after an
-- ignored one).
CREATE TABLE notice_matches (
    notice_id INTEGER NOT NULL REFERENCES notices (id) ON DELETE CASCADE,
    match_id  INTEGER NOT NULL REFERENCES matches (id) ON DELETE CASCADE,
    PRIMARY KEY (notice_id, match_id)
) STRICT;

CREATE INDEX notice_matches_match ON notice_matches (match_id);

-- Runs count copies found online again next to those found removed.
ALTER TABLE runs ADD COLUMN matches_reopened INTEGER NOT NULL DEFAULT 0 CHECK (matches_reopened >= 0);
