-- RFC 3161 trusted timestamps (issue 40, point 5): a time-stamping authority's signed token
-- that a hash existed at its `genTime`. Evidence packages keep the token of their manifest's
-- SHA-256 (also written beside the manifest as `manifest.tsr`), notice mails the token of the
-- SHA-256 of the text they mailed. `timestamp_tsa` is the TSA's URL, `timestamp_time` the
-- token's genTime, `timestamp_token` the DER TimeStampResp as the TSA answered. All three are
-- NULL when no TSA was configured; a package stamped later (`evidence timestamp DIR`) gains
-- them then.
ALTER TABLE evidence_packages ADD COLUMN timestamp_tsa TEXT;
ALTER TABLE evidence_packages ADD COLUMN timestamp_time INTEGER;
ALTER TABLE evidence_packages ADD COLUMN timestamp_token BLOB;
-- The SHA-256 of the mail's text (lower-case hex) is kept with every mail that has a token:
-- what the token's message imprint is checked against.
ALTER TABLE notice_mails ADD COLUMN body_sha256 TEXT;
ALTER TABLE notice_mails ADD COLUMN timestamp_tsa TEXT;
ALTER TABLE notice_mails ADD COLUMN timestamp_time INTEGER;
ALTER TABLE notice_mails ADD COLUMN timestamp_token BLOB;
