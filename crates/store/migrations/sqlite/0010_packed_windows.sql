-- A work's window fingerprints as one packed array instead of a row per window. A library of
-- chapters has millions of windows; as rows they were most of the cost of loading it (about
-- 115,000 rows/s on PostgreSQL, the speed of `psql \copy` itself) and of reading it back into
-- an index. Packed, a work's windows are one value written and read at the speed of its bytes.
--
-- `windows` holds, per window in ordinal order, the ordinal, the start and end byte offsets
-- (u32 each) and the SimHash (u64), big-endian: 20 bytes a window.
CREATE TABLE work_windows (
    work_id      INTEGER PRIMARY KEY REFERENCES works (id) ON DELETE CASCADE,
    window_count INTEGER NOT NULL CHECK (window_count >= 0),
    windows      BLOB    NOT NULL,
    CHECK (length(windows) = window_count * 20)
) STRICT;

INSERT INTO work_windows (work_id, window_count, windows)
SELECT work_id, count(*),
       unhex(group_concat(printf('%08X%08X%08X%016X', ordinal, start_offset, end_offset, simhash),
                          '' ORDER BY ordinal))
FROM work_segments GROUP BY work_id;

DROP TABLE work_segments;
