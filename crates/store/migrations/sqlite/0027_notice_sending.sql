-- Sending takedown notices and following them up (issue 40).
--
-- Site contacts: where a notice to a host goes. `found` ones were read from the site's own
-- pages (`found_on` is the page), `operator` ones were added by a person and win: adding an
-- address that was found makes it the operator's. One row per host and address.
CREATE TABLE site_contacts (
    id         INTEGER PRIMARY KEY,
    host       TEXT    NOT NULL CHECK (host <> ''),
    email      TEXT    NOT NULL CHECK (email <> ''),
    kind       TEXT    NOT NULL CHECK (kind IN ('abuse', 'copyright', 'general')),
    source     TEXT    NOT NULL CHECK (source IN ('found', 'operator')),
    found_on   TEXT,
    created_at INTEGER NOT NULL,
    CHECK ((source = 'found') = (found_on IS NOT NULL)),
    UNIQUE (host, email)
) STRICT;

-- The ICP filing (备案) number a host's pages show in their footer: who answers for the site
-- in China, and whom a complaint to the MIIT names. The latest one seen.
CREATE TABLE site_icp (
    host       TEXT    PRIMARY KEY CHECK (host <> ''),
    icp_number TEXT    NOT NULL CHECK (icp_number <> ''),
    found_on   TEXT    NOT NULL,
    found_at   INTEGER NOT NULL
) STRICT;

-- Notices gain the states of sending and follow-up: `sending` (a mail is on its way: recorded
-- before the SMTP exchange, so a crash leaves it visible rather than lost or sent twice),
-- `acknowledged` (the site answered) and `escalated` (its host's abuse desk was told). SQLite
-- cannot change a CHECK constraint in place, so the table is rebuilt; `notice_matches` is
-- rebuilt with it so that dropping the old table cascades into nothing.
CREATE TABLE notices_new (
    id               INTEGER PRIMARY KEY,
    rights_holder_id INTEGER NOT NULL REFERENCES rights_holders (id),
    site             TEXT    NOT NULL CHECK (site <> ''),
    lang             TEXT    NOT NULL CHECK (lang IN ('zh', 'en')),
    status           TEXT    NOT NULL DEFAULT 'draft'
        CHECK (status IN ('draft', 'sending', 'sent', 'acknowledged', 'removal_verified',
                          'partially_removed', 'ignored', 'escalated')),
    body             TEXT    NOT NULL,
    created_at       INTEGER NOT NULL,
    sent_at          INTEGER,
    status_changed_at INTEGER
) STRICT;
INSERT INTO notices_new (id, rights_holder_id, site, lang, status, body, created_at, sent_at,
                         status_changed_at)
    SELECT id, rights_holder_id, site, lang, status, body, created_at, sent_at, status_changed_at
    FROM notices;
CREATE TABLE notice_matches_new (
    notice_id INTEGER NOT NULL REFERENCES notices_new (id) ON DELETE CASCADE,
    match_id  INTEGER NOT NULL REFERENCES matches (id) ON DELETE CASCADE,
    PRIMARY KEY (notice_id, match_id)
) STRICT;
INSERT INTO notice_matches_new (notice_id, match_id)
    SELECT notice_id, match_id FROM notice_matches;
DROP TABLE notice_matches;
DROP TABLE notices;
-- Renaming updates the reference of notice_matches_new to the new name.
ALTER TABLE notices_new RENAME TO notices;
ALTER TABLE notice_matches_new RENAME TO notice_matches;
CREATE INDEX notices_holder_site ON notices (rights_holder_id, site);
CREATE INDEX notice_matches_match ON notice_matches (match_id);

-- Every mail about a notice: the notice itself, the one reminder and the one escalation. A
-- row is written `sending` before the SMTP exchange and finished after it: `sent`,
-- `refused` (the server or the connection said no: nothing was delivered, a new attempt may
-- follow), `skipped` (an escalation with nobody to write to, recorded as done) or
-- `abandoned` (stuck in `sending` after a crash and given up by a person: it may or may not
-- have arrived). The partial unique index is what makes each purpose happen at most once.
CREATE TABLE notice_mails (
    id          INTEGER PRIMARY KEY,
    notice_id   INTEGER NOT NULL REFERENCES notices (id) ON DELETE CASCADE,
    purpose     TEXT    NOT NULL CHECK (purpose IN ('notice', 'reminder', 'escalation')),
    message_id  TEXT    NOT NULL UNIQUE,
    -- Comma-separated addresses, in the order they were written to ('' for nobody).
    recipients  TEXT    NOT NULL,
    state       TEXT    NOT NULL
        CHECK (state IN ('sending', 'sent', 'refused', 'skipped', 'abandoned')),
    started_at  INTEGER NOT NULL,
    finished_at INTEGER,
    error       TEXT
) STRICT;
CREATE UNIQUE INDEX notice_mails_once ON notice_mails (notice_id, purpose)
    WHERE state IN ('sending', 'sent', 'skipped');

-- What happened to a notice, step by step: each status change (and each reminder, which
-- changes none) with its time and who or what did it (`cli:LOGIN`, `web:EMAIL`,
-- `removal-check`, `scheduler`).
CREATE TABLE notice_history (
    id          INTEGER PRIMARY KEY,
    notice_id   INTEGER NOT NULL REFERENCES notices (id) ON DELETE CASCADE,
    from_status TEXT    NOT NULL,
    to_status   TEXT    NOT NULL,
    at          INTEGER NOT NULL,
    actor       TEXT    NOT NULL CHECK (actor <> ''),
    note        TEXT
) STRICT;
CREATE INDEX notice_history_notice ON notice_history (notice_id, id);
