-- dreamdb index schema, version 11: each folder's status-change time beside its modification time.
-- A program that sets a folder's modification time back (touch -r, cp -a, tar x, some sync tools) after
-- a note was added to it hid the note from the no-change check: no sync read the folder again
-- (QA round 93-A F4). The change time moves whenever the folder does and cannot be set back.
-- Rows written before this version have none (NULL): the next sync lists every folder once and stores it.
-- NULL also marks a folder changed within the file system's clock tick of the walk (a file may be added
-- to it with nothing its stat would show): the next sync lists it again.
ALTER TABLE dirs ADD COLUMN ctime_ns INTEGER;
