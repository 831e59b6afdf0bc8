-- Per-user tokens of the JSON API, sent as `Authorization: Bearer ct_…`.
--
-- As with web sessions, only the SHA-256 (hex) of a token is kept: the table alone (a backup, a
-- leaked dump) yields no token that authenticates. A token acts as its user, with the user's
-- role and rights holder, and goes with the user.
CREATE TABLE api_tokens (
    id           INTEGER PRIMARY KEY,
    user_id      INTEGER NOT NULL REFERENCES users (id) ON DELETE CASCADE,
    -- What the token is for ("nightly report script"), chosen by whoever made it.
    name         TEXT    NOT NULL,
    token_hash   TEXT    NOT NULL UNIQUE,
    created_at   INTEGER NOT NULL,
    -- The last request it authenticated (to the minute); NULL before the first.
    last_used_at INTEGER
) STRICT;

CREATE INDEX api_tokens_user ON api_tokens (user_id);
