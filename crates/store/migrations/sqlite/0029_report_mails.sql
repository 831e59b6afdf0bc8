-- Scheduled reports by e-mail (issue 40, weekly reports): one row per report mail, recorded
-- `sending` before the SMTP exchange and finished after it, so a report for one audience and
-- period is sent at most once however often the job that sends it runs (at least once).
--
-- `audience` is whom the report is about and for: `holder:ID` (one rights holder's works, to
-- its profile's e-mail) or `staff` (every holder's, to the configured staff recipients). The
-- period is [period_from, period_to) in UTC days, `YYYY-MM-DD`. States as for notice mails:
-- `sent`, `refused` (nothing was delivered: may be tried again), `sending` (on its way, or its
-- fate unknown after a crash: never sent again by itself) and `abandoned` (a stuck one given
-- up by a person to send again).
CREATE TABLE report_mails (
    id          INTEGER PRIMARY KEY,
    kind        TEXT    NOT NULL CHECK (kind IN ('weekly')),
    audience    TEXT    NOT NULL CHECK (audience = 'staff' OR audience LIKE 'holder:%'),
    period_from TEXT    NOT NULL,
    period_to   TEXT    NOT NULL CHECK (period_to > period_from),
    message_id  TEXT    NOT NULL UNIQUE,
    -- Comma-separated addresses, in the order they were written to.
    recipients  TEXT    NOT NULL CHECK (recipients <> ''),
    state       TEXT    NOT NULL CHECK (state IN ('sending', 'sent', 'refused', 'abandoned')),
    started_at  INTEGER NOT NULL,
    finished_at INTEGER,
    error       TEXT
) STRICT;
CREATE UNIQUE INDEX report_mails_once ON report_mails (kind, audience, period_from, period_to)
    WHERE state IN ('sending', 'sent');
