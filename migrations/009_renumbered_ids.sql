-- dreamdb index schema, version 9: ids that a sync gave to another file.
-- Files of one type can share a name; their ids are numbered in path order (knowledge/foo,
-- knowledge/foo-2, …), so adding or removing such a file can move an id to another file. Each
-- such move is kept for a day (dreamdb.store.sync.RENUMBERED_GUARD_DAYS): `update` and `delete`
-- by an id that moved refuse, naming both files, instead of editing a file the caller never saw
-- (an agent recalls, the vault changes, the agent writes by the id it was shown).
CREATE TABLE renumbered_ids (
    doc_id      TEXT NOT NULL,  -- the id as it was before the sync (type/name or type/name-N)
    source_path TEXT NOT NULL,  -- the vault-relative path of the file it named then
    at_days     REAL NOT NULL   -- when the sync moved it, days since 1970-01-01 UTC
);
CREATE INDEX renumbered_ids_doc ON renumbered_ids(doc_id);
