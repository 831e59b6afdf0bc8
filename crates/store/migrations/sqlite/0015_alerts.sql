-- Alerts: per rights holder, where to tell of new reported infringements and removals (a
-- signed webhook or an e-mail digest), what each target was already told (so no event is
-- sent twice), and the deliveries with their attempts (so a failed one is retried with the
-- same body and delivery id).
CREATE TABLE alert_targets (
    id                INTEGER PRIMARY KEY,
    rights_holder_id  INTEGER NOT NULL REFERENCES rights_holders (id) ON DELETE CASCADE,
    kind              TEXT    NOT NULL CHECK (kind IN ('webhook', 'email')),
    -- The webhook's URL, or the e-mail address.
    address           TEXT    NOT NULL CHECK (address <> ''),
    -- The webhook's HMAC-SHA256 key (empty for e-mail).
    secret            TEXT    NOT NULL DEFAULT '',
    cadence           TEXT    NOT NULL CHECK (cadence IN ('after_run', 'daily')),
    lang              TEXT    NOT NULL CHECK (lang IN ('zh', 'en')),
    created_at        INTEGER NOT NULL,
    -- When events were last gathered into a delivery (a daily target waits a day after it).
    last_collected_at INTEGER,
    UNIQUE (rights_holder_id, kind, address)
) STRICT;

CREATE TABLE alert_deliveries (
    id           INTEGER PRIMARY KEY,
    target_id    INTEGER NOT NULL REFERENCES alert_targets (id) ON DELETE CASCADE,
    -- Sent with every attempt, so a receiver can drop a repeated delivery.
    delivery_key TEXT    NOT NULL UNIQUE,
    -- The events, as JSON, fixed when the delivery was gathered.
    events       TEXT    NOT NULL,
    event_count  INTEGER NOT NULL CHECK (event_count > 0),
    created_at   INTEGER NOT NULL,
    attempts     INTEGER NOT NULL DEFAULT 0 CHECK (attempts >= 0),
    next_attempt_at INTEGER NOT NULL,
    last_error   TEXT,
    delivered_at INTEGER
) STRICT;

CREATE INDEX alert_deliveries_due ON alert_deliveries (next_attempt_at) WHERE delivered_at IS NULL;

-- What each target was told: a match's first report (`new`) and its removal (`removed`), once.
CREATE TABLE alert_events (
    target_id   INTEGER NOT NULL REFERENCES alert_targets (id) ON DELETE CASCADE,
    match_id    INTEGER NOT NULL REFERENCES matches (id) ON DELETE CASCADE,
    event       TEXT    NOT NULL CHECK (event IN ('new', 'removed')),
    delivery_id INTEGER NOT NULL REFERENCES alert_deliveries (id) ON DELETE CASCADE,
    PRIMARY KEY (target_id, match_id, event)
) STRICT;

CREATE INDEX alert_events_delivery ON alert_events (delivery_id);
