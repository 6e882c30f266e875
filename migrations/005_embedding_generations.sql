-- requires: vec0
-- dreamdb index schema, version 5: an index on (model, language), and a per-model counter bumped by every insert, delete or
-- language change of a vector, maintained by triggers. language_centroids.signature records
-- it, so sums computed before any such change are known to be stale. (Version 4 signed with
-- the vector count and the largest id, which repeat when the newest vector is replaced: an
-- embeddings id is reused once the row with the largest id is deleted.)

-- The vectors of one language (the dense search scores a query's centred languages exactly).
CREATE INDEX embeddings_model_lang ON embeddings(model_id, lang);

CREATE TABLE embedding_generations (
    model_id   TEXT PRIMARY KEY,
    generation INTEGER NOT NULL
);

CREATE TRIGGER embeddings_generation_insert AFTER INSERT ON embeddings BEGIN
    INSERT INTO embedding_generations (model_id, generation) VALUES (NEW.model_id, 1)
    ON CONFLICT (model_id) DO UPDATE SET generation = generation + 1;
END;

CREATE TRIGGER embeddings_generation_delete AFTER DELETE ON embeddings BEGIN
    UPDATE embedding_generations SET generation = generation + 1 WHERE model_id = OLD.model_id;
END;

CREATE TRIGGER embeddings_generation_lang AFTER UPDATE OF lang ON embeddings BEGIN
    UPDATE embedding_generations SET generation = generation + 1 WHERE model_id = NEW.model_id;
END;
