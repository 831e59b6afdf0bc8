-- Long texts (works, pages, kept evidence texts) are compressed with lz4 instead of pglz where
-- the server can: lz4 compresses several times faster at a similar ratio, and compressing the
-- library's text was the largest single cost of bulk ingest (docs/benchmarks.md, "Library
-- ingest"). Rows already stored keep their pglz compression; both read back the same.
--
-- PostgreSQL 14 introduced per-column compression, and only servers built --with-lz4 have it.
-- Elsewhere this step changes nothing: pglz stays, which is slower but equally correct.
DO $$
BEGIN
    IF current_setting('server_version_num')::int >= 140000 THEN
        BEGIN
            EXECUTE 'ALTER TABLE works ALTER COLUMN content SET COMPRESSION lz4';
            EXECUTE 'ALTER TABLE pages ALTER COLUMN text SET COMPRESSION lz4';
            EXECUTE 'ALTER TABLE page_texts ALTER COLUMN text SET COMPRESSION lz4';
        EXCEPTION WHEN feature_not_supported THEN
            RAISE NOTICE 'lz4 compression is not available on this server; texts stay pglz';
        END;
    END IF;
END
$$;
