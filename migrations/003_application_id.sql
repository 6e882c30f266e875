-- Mark the file as a dreamdb index in the SQLite header (application_id "drmd" = 0x64726D64),
-- so that dreamdb never deletes or migrates a file that is not its own (DREAMDB_INDEX pointed at
-- somebody else's file is refused instead; see dreamdb/config.py index_file_kind).
PRAGMA application_id = 1685220708;
