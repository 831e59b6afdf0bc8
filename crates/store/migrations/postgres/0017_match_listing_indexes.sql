-- The web's match lists (`Store::match_listing`) read one page of the newest matches, or of the
-- strongest for the review queue, out of millions: with these indexes the database walks the
-- matches in the list's order and stops after the page, instead of sorting every match first.
CREATE INDEX matches_newest ON matches (first_seen DESC, id DESC);
CREATE INDEX matches_strongest ON matches (score DESC, id);
