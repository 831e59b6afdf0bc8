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
-- Triggers keep it, so every path that writes works moves it without knowing about it. The
-- row is locked by the change until its transaction ends, so generations follow commit order.
CREATE TABLE library_state (
    id INTEGER PRIMARY KEY CHECK (id = 1),
    generation BIGINT NOT NULL DEFAULT 0,
    rewritten BIGINT NOT NULL DEFAULT 0,
    marked BIGINT NOT NULL DEFAULT 0
);
INSERT INTO library_state (id) VALUES (1);

-- The generation at which each work last changed (and of works deleted since: `removed`).
CREATE TABLE work_generations (
    work_id BIGINT PRIMARY KEY,
    generation BIGINT NOT NULL,
    removed INTEGER NOT NULL DEFAULT 0 CHECK (removed IN (0, 1))
);
CREATE INDEX work_generations_generation ON work_generations (generation);

CREATE FUNCTION works_generation() RETURNS trigger AS $$
DECLARE
    next BIGINT;
    work BIGINT;
    gone INTEGER := 0;
BEGIN
    IF TG_OP = 'INSERT' THEN
        UPDATE library_state SET generation = generation + 1 WHERE id = 1
            RETURNING generation INTO next;
        work := NEW.id;
    ELSIF TG_OP = 'DELETE' THEN
        UPDATE library_state SET generation = generation + 1, rewritten = generation + 1
            WHERE id = 1 RETURNING generation INTO next;
        work := OLD.id;
        gone := 1;
    ELSIF OLD.content_hash IS DISTINCT FROM NEW.content_hash
       OR OLD.fingerprint_version IS DISTINCT FROM NEW.fingerprint_version
       OR OLD.status IS DISTINCT FROM NEW.status THEN
        -- A withdrawn work brought back with the same text is an addition; anything else
        -- replaces or removes text an index may hold.
        UPDATE library_state SET
            generation = generation + 1,
            rewritten = CASE
                WHEN OLD.status = 'withdrawn' AND NEW.status = 'active'
                     AND OLD.content_hash IS NOT DISTINCT FROM NEW.content_hash
                     AND OLD.fingerprint_version IS NOT DISTINCT FROM NEW.fingerprint_version
                THEN rewritten
                ELSE generation + 1
            END
        WHERE id = 1 RETURNING generation INTO next;
        work := NEW.id;
    ELSE
        RETURN NULL;
    END IF;
    INSERT INTO work_generations (work_id, generation, removed) VALUES (work, next, gone)
        ON CONFLICT (work_id) DO UPDATE SET generation = EXCLUDED.generation,
                                            removed = EXCLUDED.removed;
    RETURN NULL;
END
$$ LANGUAGE plpgsql;

CREATE TRIGGER works_generation AFTER INSERT OR UPDATE OR DELETE ON works
    FOR EACH ROW EXECUTE FUNCTION works_generation();

-- The works stored before generations existed are generation 0 (listed, so that a match worker
-- reads every work's id here without reading the works): an index built before is rebuilt
-- once (`copytrace index rebuild`), as the upgrade notes say.
INSERT INTO work_generations (work_id, generation, removed) SELECT id, 0, 0 FROM works;
