-- RFC 3161 trusted timestamps (issue 40, point 5); see the SQLite migration for the why.
ALTER TABLE evidence_packages ADD COLUMN timestamp_tsa TEXT;
ALTER TABLE evidence_packages ADD COLUMN timestamp_time TIMESTAMPTZ;
ALTER TABLE evidence_packages ADD COLUMN timestamp_token BYTEA;
ALTER TABLE notice_mails ADD COLUMN body_sha256 TEXT;
ALTER TABLE notice_mails ADD COLUMN timestamp_tsa TEXT;
ALTER TABLE notice_mails ADD COLUMN timestamp_time TIMESTAMPTZ;
ALTER TABLE notice_mails ADD COLUMN timestamp_token BYTEA;
