-- dreamdb index schema, version 8: indexes for two questions asked about the whole corpus, which
-- otherwise read the whole documents table, bodies included (≈ 120-170 ms at 100,000 documents):
-- * which documents carry an expiry date: a recall that finds nothing asks whether documents past
--   their expiry would have matched (to say so), and a hybrid query asks whether any document has
--   expired (if none, the dense channel searches every vector without a document filter);
-- * which statuses exist: a recall filtered by a status that finds nothing names the statuses
--   present (read from this index alone).
CREATE INDEX documents_expires ON documents(expires_days) WHERE expires_days IS NOT NULL;
CREATE INDEX documents_status ON documents(status) WHERE status IS NOT NULL;
