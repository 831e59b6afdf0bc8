-- Further steps of follow-up and signature images (issue 40); see the SQLite migration for the
-- why. PostgreSQL changes the CHECK constraints in place (SQLite rebuilds the tables).
ALTER TABLE site_contacts DROP CONSTRAINT site_contacts_kind_check;
ALTER TABLE site_contacts ADD CONSTRAINT site_contacts_kind_check
    CHECK (kind IN ('abuse', 'copyright', 'general', 'cdn'));

ALTER TABLE notices DROP CONSTRAINT notices_status_check;
ALTER TABLE notices ADD CONSTRAINT notices_status_check
    CHECK (status IN ('draft', 'sending', 'sent', 'acknowledged', 'removal_verified',
                      'partially_removed', 'ignored', 'escalated', 'delisting'));

ALTER TABLE notice_mails DROP CONSTRAINT notice_mails_purpose_check;
ALTER TABLE notice_mails ADD CONSTRAINT notice_mails_purpose_check
    CHECK (purpose IN ('notice', 'reminder', 'escalation', 'cdn_escalation', 'delisting'));

ALTER TABLE rights_holder_profiles ADD COLUMN signature_image BYTEA;
ALTER TABLE rights_holder_profiles ADD COLUMN signature_image_type TEXT
    CHECK (signature_image_type IN ('image/png', 'image/jpeg'));
