-- Rights-holder profiles: what a takedown notice must say about the claimant (see the SQLite
-- migration for the why).
CREATE TABLE rights_holder_profiles (
    rights_holder_id BIGINT PRIMARY KEY REFERENCES rights_holders (id) ON DELETE CASCADE,
    legal_name       TEXT,
    address          TEXT,
    email            TEXT,
    phone            TEXT,
    agent_name       TEXT,
    agent_role       TEXT,
    agent_contact    TEXT,
    signature        TEXT,
    language         TEXT NOT NULL CHECK (language IN ('zh', 'en')),
    updated_at       TIMESTAMPTZ NOT NULL
);
