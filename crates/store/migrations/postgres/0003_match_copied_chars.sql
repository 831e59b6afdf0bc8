-- How many characters of the page the matcher verified as copied from the work (boilerplate
-- excluded). It is the quantity the report threshold is applied to, so analysts can re-apply a
-- stricter threshold to an export, and the quality benchmark can sweep it. Matches recorded
-- before this column existed read 0 until their page is matched again. (SQLite:
-- migrations/sqlite/0003.)
ALTER TABLE matches ADD COLUMN copied_chars BIGINT NOT NULL DEFAULT 0 CHECK (copied_chars >= 0);
