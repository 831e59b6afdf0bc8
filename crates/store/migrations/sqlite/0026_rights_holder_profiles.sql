-- Rights-holder profiles: what a takedown notice must say about the claimant. China's
-- 《信息网络传播权保护条例》 art. 14 asks for the rights holder's name, contact and address;
-- 17 U.S.C. §512(c)(3) for a signature and contact information of the person authorised to act.
-- One row per holder at most (a holder without one has not filled it in yet), in a table of its
-- own so that `rights_holders` (read by every listing) stays a name and a time. Every text is
-- NULL when not given, so "missing" is one state, not NULL or ''. `language` is the holder's
-- default notice language: zh picks the Chinese (条例) template, en the US (DMCA) one.
CREATE TABLE rights_holder_profiles (
    rights_holder_id INTEGER PRIMARY KEY REFERENCES rights_holders (id) ON DELETE CASCADE,
    legal_name       TEXT,
    address          TEXT,
    email            TEXT,
    phone            TEXT,
    agent_name       TEXT,
    agent_role       TEXT,
    agent_contact    TEXT,
    signature        TEXT,
    language         TEXT    NOT NULL CHECK (language IN ('zh', 'en')),
    updated_at       INTEGER NOT NULL
) STRICT;
