-- PostgreSQL drops the foreign key of work_segments in this step (checking it per window row was
-- most of the cost of loading a library there). SQLite checks it in-process at no comparable
-- cost, so it keeps it; this step only keeps the two migration lists one for one.
SELECT 1;
