-- requires: vec0
-- dreamdb index schema, version 4: the language of each embedded text and per-language
-- vector sums, for language-centred dense scores (dreamdb/embeddings/language.py).
-- Derived data: `dreamdb embed refresh` fills both.

-- ISO 639-1 code of the chunk text (py3langid); '' = no language determined
-- (low confidence, or code/hex); NULL = not identified yet.
ALTER TABLE embeddings ADD COLUMN lang TEXT;
CREATE INDEX embeddings_lang_todo ON embeddings(model_id) WHERE lang IS NULL;

-- Per model and language: how many vectors, and their sum (mean = vector_sum / n).
-- signature = '<count>:<max id>' of the model's vectors when computed: a different
-- value means vectors were added or removed since, and the sums are recomputed.
CREATE TABLE language_centroids (
    model_id   TEXT NOT NULL,
    lang       TEXT NOT NULL,               -- '' = undetermined
    n          INTEGER NOT NULL,
    vector_sum BLOB NOT NULL,               -- float64[384]
    signature  TEXT NOT NULL,
    PRIMARY KEY (model_id, lang)
);
