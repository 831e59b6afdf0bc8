-- Each match carries its work's rights holder, so a rights holder's match lists walk an index of
-- that holder's matches in the list's order and stop after the page. Without it, a holder's
-- page of the newest matches walked everyone's (`matches_newest`) and threw away the other
-- holders' (19 in 20 with 20 holders): a tenth page read about 10,000 matches to show 50.
-- A work never changes hands (works are unique per holder and external id), so the copy is
-- set once, when the match is first recorded, from its work.
ALTER TABLE matches ADD COLUMN rights_holder_id BIGINT;
UPDATE matches m SET rights_holder_id = w.rights_holder_id FROM works w WHERE w.id = m.work_id;
ALTER TABLE matches ALTER COLUMN rights_holder_id SET NOT NULL;
CREATE INDEX matches_holder_newest ON matches (rights_holder_id, first_seen DESC, id DESC);
CREATE INDEX matches_holder_strongest ON matches (rights_holder_id, score DESC, id);
-- Fresh statistics for the new column, so plans see a holder's share of the matches at once.
ANALYZE matches;
