-- Window rows are written only together with their work, in the work's own transaction, and a
-- work is never deleted (it is withdrawn, see 0007): the foreign key of work_segments guards
-- nothing the store does not already guarantee, and checking it (a lookup and a FOR KEY SHARE
-- lock on the work, per window row) was about two thirds of the cost of loading a library
-- (docs/benchmarks.md, "Store bulk load"). Without it a work's windows go in at the speed of
-- the rows themselves. Deleting a work still deletes its windows: see the trigger below.
ALTER TABLE work_segments DROP CONSTRAINT work_segments_work_id_fkey;

CREATE FUNCTION delete_work_segments() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    DELETE FROM work_segments WHERE work_id = OLD.id;
    RETURN OLD;
END;
$$;

CREATE TRIGGER works_delete_segments AFTER DELETE ON works
    FOR EACH ROW EXECUTE FUNCTION delete_work_segments();
