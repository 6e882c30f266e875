-- dreamdb index schema, version 1.
-- Every table here is derived from the vault and can be rebuilt from it.
-- Documented for people who read the index with SQL: docs/schema.md.

CREATE TABLE meta (
    key   TEXT PRIMARY KEY,
    value TEXT
);

-- Sync state: one row per vault source file (stat pre-filter + content hash).
CREATE TABLE files (
    path      TEXT PRIMARY KEY,          -- vault-relative POSIX path
    mtime_ns  INTEGER NOT NULL,          -- st_mtime_ns at last sync
    size      INTEGER NOT NULL,          -- bytes
    sha256    TEXT NOT NULL,             -- content hash (hex); 'unreadable' if it could not be read
    synced_at TEXT NOT NULL              -- ISO-8601 UTC
);

-- Folders the sync walked, with their mtime: a file added, removed or renamed
-- changes its folder's mtime, so an unchanged folder set + unchanged file stats
-- means the vault is unchanged (the no-change fast path).
CREATE TABLE dirs (
    path     TEXT PRIMARY KEY,           -- vault-relative POSIX path ('.' = the vault root)
    mtime_ns INTEGER NOT NULL
);

-- One row per searchable document (SPEC §1).
CREATE TABLE documents (
    id              INTEGER PRIMARY KEY,
    doc_id          TEXT NOT NULL UNIQUE,        -- 'type/slug'
    type            TEXT NOT NULL,
    slug            TEXT NOT NULL,
    source_path     TEXT NOT NULL REFERENCES files(path) ON DELETE CASCADE,
    ordinal         INTEGER NOT NULL DEFAULT 0,  -- position in the source file (sections, entries)
    title           TEXT NOT NULL,
    description     TEXT NOT NULL DEFAULT '',
    tags            TEXT NOT NULL DEFAULT '[]',  -- JSON array of tags (facet prefixes stripped)
    body            TEXT NOT NULL DEFAULT '',
    date            TEXT,                        -- ISO-8601 date or instant, NULL = unknown
    date_days       REAL,                        -- same, as days since 1970-01-01 UTC
    status          TEXT,
    level           INTEGER NOT NULL DEFAULT 2,  -- importance 1..3 (filter only)
    pinned          INTEGER NOT NULL DEFAULT 0,
    confidence      REAL,                        -- 0..1 or NULL
    expires         TEXT,
    expires_days    REAL,
    supersedes      TEXT,                        -- doc_id of the changelog entry this one replaces
    identity_boost  INTEGER NOT NULL DEFAULT 1,  -- 0 for changelog entries and captures
    is_capture      INTEGER NOT NULL DEFAULT 0,
    turkish         INTEGER NOT NULL DEFAULT 0,  -- analyzed as Turkish text
    len_title       INTEGER NOT NULL,            -- field lengths in terms (after analysis)
    len_description INTEGER NOT NULL,
    len_tags        INTEGER NOT NULL,
    len_body        INTEGER NOT NULL,
    content_hash    TEXT NOT NULL                -- sha256 of the indexed text fields
);
CREATE INDEX documents_type ON documents(type);
CREATE INDEX documents_source ON documents(source_path);
CREATE INDEX documents_supersedes ON documents(supersedes) WHERE supersedes IS NOT NULL;

CREATE TABLE document_tags (
    tag TEXT NOT NULL,                           -- lowercased; both 'topic:x' and 'x' forms
    doc INTEGER NOT NULL REFERENCES documents(id) ON DELETE CASCADE,
    PRIMARY KEY (tag, doc)
) WITHOUT ROWID;
CREATE INDEX document_tags_doc ON document_tags(doc);

-- Postings: one row per (term, document), with the term frequency per field.
-- tf_slug counts the term in the slug (identity boost only; not a BM25 field).
CREATE TABLE postings (
    term           TEXT NOT NULL,
    doc            INTEGER NOT NULL REFERENCES documents(id) ON DELETE CASCADE,
    tf_title       INTEGER NOT NULL,
    tf_description INTEGER NOT NULL,
    tf_tags        INTEGER NOT NULL,
    tf_body        INTEGER NOT NULL,
    tf_slug        INTEGER NOT NULL,
    PRIMARY KEY (term, doc)
) WITHOUT ROWID;
CREATE INDEX postings_doc ON postings(doc);

-- Corpus statistics for BM25 length normalisation, refreshed by every sync that changes something.
CREATE TABLE corpus_stats (
    id                  INTEGER PRIMARY KEY CHECK (id = 1),
    n_docs              INTEGER NOT NULL,
    avg_len             REAL NOT NULL,       -- mean of len_title+len_description+len_tags+len_body
    avg_len_title       REAL NOT NULL,
    avg_len_description REAL NOT NULL,
    avg_len_tags        REAL NOT NULL,
    avg_len_body        REAL NOT NULL
);
INSERT INTO corpus_stats VALUES (1, 0, 0, 0, 0, 0, 0);

-- Document frequency and collection frequency per term (BM25 IDF input).
CREATE VIEW terms AS
SELECT term,
       SUM(tf_title + tf_description + tf_tags + tf_body > 0) AS df,
       SUM(tf_title + tf_description + tf_tags + tf_body)     AS cf
FROM postings GROUP BY term;

-- Documents with their length, for reading.
CREATE VIEW document_lengths AS
SELECT doc_id, len_title, len_description, len_tags, len_body,
       len_title + len_description + len_tags + len_body AS len
FROM documents;
