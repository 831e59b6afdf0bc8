-- The library's generation: a counter that every change a candidate index must follow moves
-- (a work added, its text or fingerprint version replaced, withdrawn, brought back, deleted),
-- in the transaction that makes the change. An index records the generation it reflects, so a
-- match worker tells at once, from one row, whether the index is the library's, and whether
-- what it lacks is only works added since (it keeps matching; the pages that may copy them are
-- marked after the index has them) or a replacement or removal (it waits for the update).
--
--   generation  the last change;
--   rewritten   the last change that was not an addition (replacement, withdrawal, deletion):
--               an index older than this may propose text that is no longer the library's;
--   marked      the last generation whose works have had their pages marked for matching.
--
-- Triggers keep it, so every path that writes works (library add, catalogs, refingerprinting,
-- library rm, deleting a holder) moves it without knowing about it.
CREATE TABLE library_state (
    id INTEGER PRIMARY KEY CHECK (id = 1),
    generation INTEGER NOT NULL DEFAULT 0,
    rewritten INTEGER NOT NULL DEFAULT 0,
    marked INTEGER NOT NULL DEFAULT 0
);
INSERT INTO library_state (id) VALUES (1);

-- The generation at which each work last changed (and of works deleted since: `removed`), in a
-- table of its own: a column of `works` would sit after the text, and setting it would rewrite
-- the text's pages.
CREATE TABLE work_generations (
    work_id INTEGER PRIMARY KEY,
    generation INTEGER NOT NULL,
    removed INTEGER NOT NULL DEFAULT 0 CHECK (removed IN (0, 1))
);
CREATE INDEX work_generations_generation ON work_generations (generation);

CREATE TRIGGER works_generation_insert AFTER INSERT ON works
BEGIN
    UPDATE library_state SET generation = generation + 1 WHERE id = 1;
    INSERT INTO work_generations (work_id, generation, removed)
        VALUES (NEW.id, (SELECT generation FROM library_state WHERE id = 1), 0)
        ON CONFLICT (work_id) DO UPDATE SET generation = excluded.generation, removed = 0;
END;

CREATE TRIGGER works_generation_update
AFTER UPDATE OF content_hash, fingerprint_version, status ON works
WHEN OLD.content_hash IS NOT NEW.content_hash
  OR OLD.fingerprint_version IS NOT NEW.fingerprint_version
  OR OLD.status IS NOT NEW.status
BEGIN
    -- A withdrawn work brought back with the same text is an addition; anything else replaces
    -- or removes text an index may hold.
    UPDATE library_state SET
        generation = generation + 1,
        rewritten = CASE
            WHEN OLD.status = 'withdrawn' AND NEW.status = 'active'
                 AND OLD.content_hash IS NEW.content_hash
                 AND OLD.fingerprint_version IS NEW.fingerprint_version
            THEN rewritten
            ELSE generation + 1
        END
    WHERE id = 1;
    INSERT INTO work_generations (work_id, generation, removed)
        VALUES (NEW.id, (SELECT generation FROM library_state WHERE id = 1), 0)
        ON CONFLICT (work_id) DO UPDATE SET generation = excluded.generation, removed = 0;
END;

CREATE TRIGGER works_generation_delete AFTER DELETE ON works
BEGIN
    UPDATE library_state SET generation = generation + 1, rewritten = generation + 1 WHERE id = 1;
    INSERT INTO work_generations (work_id, generation, removed)
        VALUES (OLD.id, (SELECT generation FROM library_state WHERE id = 1), 1)
        ON CONFLICT (work_id) DO UPDATE SET generation = excluded.generation, removed = 1;
END;

-- The works stored before generations existed are generation 0 (listed, so that a match worker
-- reads every work's id here without reading the works): an index built before is rebuilt
-- once (`copytrace index rebuild`), as the upgrade notes say.
INSERT INTO work_generations (work_id, generation, removed) SELECT id, 0, 0 FROM works;
