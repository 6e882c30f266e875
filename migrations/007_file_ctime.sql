-- dreamdb index schema, version 7: each source file's status-change time (st_ctime_ns) joins its
-- modification time and size in the stat pre-filter of sync. An edit that keeps the size and puts
-- the old modification time back (cp -p, rsync -t, an archive restored, os.utime) still moves the
-- ctime, which no program can set; without it such an edit was never re-read. NULL (rows from
-- before) counts as changed once: those files are re-hashed, and re-parsed only if their content differs.
ALTER TABLE files ADD COLUMN ctime_ns INTEGER;
