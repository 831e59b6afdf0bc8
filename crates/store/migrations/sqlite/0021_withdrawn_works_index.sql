-- Recording a page's verdict (and listing a page's matches) leaves out the matches of withdrawn
-- works with `work_id NOT IN (SELECT id FROM works WHERE status = 'withdrawn')`. Without an
-- index that subquery scanned every work, and on SQLite reading `status`, stored after the
-- work's text, walked each text's overflow pages: the whole library was read for every page
-- matched. This partial index holds only the withdrawn works (usually none).
CREATE INDEX works_withdrawn ON works (id) WHERE status = 'withdrawn';
