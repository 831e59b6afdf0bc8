-- PostgreSQL leads through session-level advisory locks (see PostgresStore::try_lead) and needs
-- no lease table; this step mirrors SQLite's 0004 so both backends keep one migration history.

-- Job listings by kind and state (queue depth, `copytrace jobs list --state dead`).
CREATE INDEX jobs_kind_state ON jobs (kind, state);
