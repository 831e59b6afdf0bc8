-- Leadership of process-wide singletons (the scheduler loop) for the embedded backend, where
-- there are no advisory locks: one row per name, held by `holder` until `lease_until`
-- (microseconds since the epoch), renewed by the holder while it leads.
CREATE TABLE leader_leases (
    name        TEXT    PRIMARY KEY,
    holder      TEXT    NOT NULL,
    lease_until INTEGER NOT NULL
) STRICT;

-- Job listings by kind and state (queue depth, `copytrace jobs list --state dead`).
CREATE INDEX jobs_kind_state ON jobs (kind, state);
