-- Sessions of the admin web, and failed logins for its rate limiter.
--
-- A session is found by the SHA-256 of its cookie's random token, so the table alone (a backup,
-- a leaked dump) yields no cookie that logs anyone in.
CREATE TABLE web_sessions (
    token_hash TEXT    PRIMARY KEY,
    user_id    BIGINT  NOT NULL REFERENCES users (id) ON DELETE CASCADE,
    -- Every form of the session carries it.
    csrf_token TEXT    NOT NULL,
    created_at TIMESTAMPTZ NOT NULL,
    expires_at TIMESTAMPTZ NOT NULL
);

CREATE INDEX web_sessions_user ON web_sessions (user_id);
CREATE INDEX web_sessions_expiry ON web_sessions (expires_at);

-- One row per failed login, keyed `account:EMAIL` and `address:IP`.
CREATE TABLE login_failures (
    key TEXT    NOT NULL,
    at  TIMESTAMPTZ NOT NULL
);

CREATE INDEX login_failures_key ON login_failures (key, at);
