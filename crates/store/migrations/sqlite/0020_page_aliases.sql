-- One page under many URLs: pirate sites serve the same chapter with tracking parameters,
-- as `index.html` and `/`, and on mobile and desktop hosts. A page whose text is the same as
-- that of an earlier page of the same site (mobile and desktop hosts counted as one) is an
-- alias of it: it records no matches of its own, and reports list it beside its page.
-- NULL for a page that is nobody's alias. Deleting the page an alias points to frees it.
ALTER TABLE pages ADD COLUMN alias_of INTEGER REFERENCES pages (id) ON DELETE SET NULL;
-- Finding the earlier pages with the same text, and the aliases of a page.
CREATE INDEX pages_content_hash ON pages (content_hash, id);
CREATE INDEX pages_alias_of ON pages (alias_of) WHERE alias_of IS NOT NULL;
