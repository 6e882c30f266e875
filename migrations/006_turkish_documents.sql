-- dreamdb index schema, version 6: the documents analysed as Turkish, indexed. Query planning
-- asks whether the index holds any (a query word is then also tried in its Turkish readings,
-- and a Turkish reading of an English-analysed word must occur in one of them); without the
-- index that question reads the whole documents table, bodies included, on every CLI recall.
CREATE INDEX documents_turkish ON documents(id) WHERE turkish;
