-- Further steps of follow-up (issue 40): after the escalation to the host's abuse desk, one to
-- the site's CDN (contacts of kind `cdn`: a CDN hides the host that serves the copies) and the
-- search-engine delisting step (the notice's URL lists for Google, Bing and Baidu, made and
-- handed to the rights holder), which moves the notice to `delisting`. Each is a mail purpose
-- of its own, so the partial unique index `notice_mails_once` keeps each at most once.
--
-- SQLite cannot change a CHECK constraint in place, so `site_contacts`, `notices` and the three
-- tables that reference `notices` are rebuilt, as 0027 did: the children are copied into new
-- tables referencing `notices_new`, the old children dropped before the old `notices` (so its
-- drop cascades into nothing), then every new table is renamed, which updates the references.
CREATE TABLE site_contacts_new (
    id         INTEGER PRIMARY KEY,
    host       TEXT    NOT NULL CHECK (host <> ''),
    email      TEXT    NOT NULL CHECK (email <> ''),
    kind       TEXT    NOT NULL CHECK (kind IN ('abuse', 'copyright', 'general', 'cdn')),
    source     TEXT    NOT NULL CHECK (source IN ('found', 'operator')),
    found_on   TEXT,
    created_at INTEGER NOT NULL,
    CHECK ((source = 'found') = (found_on IS NOT NULL)),
    UNIQUE (host, email)
) STRICT;
INSERT INTO site_contacts_new (id, host, email, kind, source, found_on, created_at)
    SELECT id, host, email, kind, source, found_on, created_at FROM site_contacts;
DROP TABLE site_contacts;
ALTER TABLE site_contacts_new RENAME TO site_contacts;

CREATE TABLE notices_new (
    id               INTEGER PRIMARY KEY,
    rights_holder_id INTEGER NOT NULL REFERENCES rights_holders (id),
    site             TEXT    NOT NULL CHECK (site <> ''),
    lang             TEXT    NOT NULL CHECK (lang IN ('zh', 'en')),
    status           TEXT    NOT NULL DEFAULT 'draft'
        CHECK (status IN ('draft', 'sending', 'sent', 'acknowledged', 'removal_verified',
                          'partially_removed', 'ignored', 'escalated', 'delisting')),
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

CREATE TABLE notice_mails_new (
    id          INTEGER PRIMARY KEY,
    notice_id   INTEGER NOT NULL REFERENCES notices_new (id) ON DELETE CASCADE,
    purpose     TEXT    NOT NULL CHECK (purpose IN ('notice', 'reminder', 'escalation',
                                                    'cdn_escalation', 'delisting')),
    message_id  TEXT    NOT NULL UNIQUE,
    recipients  TEXT    NOT NULL,
    state       TEXT    NOT NULL
        CHECK (state IN ('sending', 'sent', 'refused', 'skipped', 'abandoned')),
    started_at  INTEGER NOT NULL,
    finished_at INTEGER,
    error       TEXT,
    body_sha256 TEXT,
    timestamp_tsa TEXT,
    timestamp_time INTEGER,
    timestamp_token BLOB
) STRICT;
INSERT INTO notice_mails_new (id, notice_id, purpose, message_id, recipients, state, started_at,
                              finished_at, error, body_sha256, timestamp_tsa, timestamp_time,
                              timestamp_token)
    SELECT id, notice_id, purpose, message_id, recipients, state, started_at, finished_at, error,
           body_sha256, timestamp_tsa, timestamp_time, timestamp_token
    FROM notice_mails;

CREATE TABLE notice_history_new (
    id          INTEGER PRIMARY KEY,
    notice_id   INTEGER NOT NULL REFERENCES notices_new (id) ON DELETE CASCADE,
    from_status TEXT    NOT NULL,
    to_status   TEXT    NOT NULL,
    at          INTEGER NOT NULL,
    actor       TEXT    NOT NULL CHECK (actor <> ''),
    note        TEXT
) STRICT;
INSERT INTO notice_history_new (id, notice_id, from_status, to_status, at, actor, note)
    SELECT id, notice_id, from_status, to_status, at, actor, note FROM notice_history;

DROP TABLE notice_matches;
DROP TABLE notice_mails;
DROP TABLE notice_history;
DROP TABLE notices;
ALTER TABLE notices_new RENAME TO notices;
ALTER TABLE notice_matches_new RENAME TO notice_matches;
ALTER TABLE notice_mails_new RENAME TO notice_mails;
ALTER TABLE notice_history_new RENAME TO notice_history;
CREATE INDEX notices_holder_site ON notices (rights_holder_id, site);
CREATE INDEX notice_matches_match ON notice_matches (match_id);
CREATE UNIQUE INDEX notice_mails_once ON notice_mails (notice_id, purpose)
    WHERE state IN ('sending', 'sent', 'skipped');
CREATE INDEX notice_history_notice ON notice_history (notice_id, id);

-- A rights holder's signature as an image (issue 40, profiles): a PNG or JPEG of at most
-- 200 KB, checked by its magic bytes before it is stored, shown under the signature line of
-- the notice's HTML mail and web view. Both NULL when there is none.
ALTER TABLE rights_holder_profiles ADD COLUMN signature_image BLOB;
ALTER TABLE rights_holder_profiles ADD COLUMN signature_image_type TEXT
    CHECK (signature_image_type IN ('image/png', 'image/jpeg'));
