-- PostgreSQL switches its long texts to lz4 compression in this step. SQLite does not compress
-- text, so it has nothing to change; this step only keeps the two migration lists one for one.
SELECT 1;
