-- requires: vec0
-- dreamdb index schema, version 5: an index on (model, language), and a per-model generation
-- counter, kept by triggers, that changes with every insert, delete or language change of one
-- of the model's vectors and with every change of chunks (which decide the vectors in use).
-- language_centroids.signature records it, so sums computed before any such change are known
-- to be stale. (Version 4 signed with the vector count and the largest id, which repeat when
-- the newest vector is replaced: an embeddings id is reused once the row with the largest id
-- is deleted.)

-- The vectors of one language (the dense search scores a query's centred languages exactly).
CREATE INDEX embeddings_model_lang ON embeddings(model_id, lang);

CREATE TABLE embedding_generations (
    model_id   TEXT PRIMARY KEY,
    generation INTEGER NOT NULL
);

-- Models whose vectors were stored before this migration.
INSERT INTO embedding_generations (model_id, generation) SELECT model_id, 1 FROM embeddings GROUP BY model_id;

CREATE TRIGGER embeddings_generation_insert AFTER INSERT ON embeddings BEGIN
    INSERT INTO embedding_generations (model_id, generation) VALUES (NEW.model_id, 1)
    ON CONFLICT (model_id) DO UPDATE SET generation = generation + 1;
END;

CREATE TRIGGER embeddings_generation_delete AFTER DELETE ON embeddings BEGIN
    INSERT INTO embedding_generations (model_id, generation) VALUES (OLD.model_id, 1)
    ON CONFLICT (model_id) DO UPDATE SET generation = generation + 1;
END;

CREATE TRIGGER embeddings_generation_lang AFTER UPDATE OF lang ON embeddings BEGIN
    INSERT INTO embedding_generations (model_id, generation) VALUES (NEW.model_id, 1)
    ON CONFLICT (model_id) DO UPDATE SET generation = generation + 1;
END;

-- The sums count only vectors some chunk uses: a deleted or re-chunked document changes them.
CREATE TRIGGER chunks_generation_insert AFTER INSERT ON chunks BEGIN
    UPDATE embedding_generations SET generation = generation + 1;
END;

CREATE TRIGGER chunks_generation_delete AFTER DELETE ON chunks BEGIN
    UPDATE embedding_generations SET generation = generation + 1;
END;
