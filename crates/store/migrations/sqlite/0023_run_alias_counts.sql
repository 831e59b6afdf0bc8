-- Removal checks re-check the other URLs (aliases) of a page they find removed before any of
-- them is matched on its own: a run records how many aliases it fetched, how many still showed
-- the copy and took their group's matches over, and how many were gone with their page.
ALTER TABLE runs ADD COLUMN aliases_checked INTEGER NOT NULL DEFAULT 0 CHECK (aliases_checked >= 0);
ALTER TABLE runs ADD COLUMN aliases_kept INTEGER NOT NULL DEFAULT 0 CHECK (aliases_kept >= 0);
ALTER TABLE runs ADD COLUMN aliases_removed INTEGER NOT NULL DEFAULT 0 CHECK (aliases_removed >= 0);
