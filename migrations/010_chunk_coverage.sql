-- requires: vec0
-- dreamdb index schema, version 10: how much of each document its chunks hold. A document longer than
-- the chunker's cap (dreamdb.embeddings.chunk.MAX_CHUNKS_PER_DOCUMENT chunks, about 48,000 words) has
-- vectors for its head only: the dense channel cannot find its tail (BM25 still does), and
-- `dreamdb embed status` and `dreamdb embed refresh` name such documents.
-- Rows written before this version have no counts (NULL): their documents count as waiting to be
-- chunked, and the next refresh (or hybrid query) chunks them again; their chunk texts, and so their
-- vectors, are unchanged.

-- Whitespace-separated words of the text chunked (the description, when prepended, and the body).
ALTER TABLE chunked_documents ADD COLUMN words INTEGER;
-- Of those, the words in the document's chunks: fewer than `words` when the cap cut the text.
ALTER TABLE chunked_documents ADD COLUMN embedded_words INTEGER;
