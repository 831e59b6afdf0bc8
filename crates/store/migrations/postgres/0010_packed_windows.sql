-- A work's window fingerprints as one packed array instead of a row per window (see the SQLite
-- migration for the why and the layout: per window, ordinal, start, end as u32 and the SimHash as
-- u64, big-endian, 20 bytes).
CREATE TABLE work_windows (
    work_id      BIGINT PRIMARY KEY REFERENCES works (id) ON DELETE CASCADE,
    window_count BIGINT NOT NULL CHECK (window_count >= 0),
    windows      BYTEA NOT NULL,
    CHECK (length(windows) = window_count * 20)
);

-- SimHashes and offsets do not compress: stored out of line without trying (pglz would spend
-- the time and keep the bytes as they are).
ALTER TABLE work_windows ALTER COLUMN windows SET STORAGE EXTERNAL;

INSERT INTO work_windows (work_id, window_count, windows)
SELECT work_id, count(*),
       decode(string_agg(lpad(to_hex(ordinal), 8, '0') || lpad(to_hex(start_offset), 8, '0')
                         || lpad(to_hex(end_offset), 8, '0') || lpad(to_hex(simhash), 16, '0'),
                         '' ORDER BY ordinal), 'hex')
FROM work_segments GROUP BY work_id;

DROP TRIGGER works_delete_segments ON works;
DROP FUNCTION delete_work_segments();
DROP TABLE work_segments;
