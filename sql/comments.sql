-- Documentation of pg_chunk's functions, shown by \df+ and obj_description().

COMMENT ON FUNCTION knowledge.chunk(text, jsonb) IS
'Chunks a document with the strategy cfg names (semantic by default). Offsets are 0-based characters: substr(doc, char_offset + 1, char_length) = content.';

COMMENT ON FUNCTION knowledge.semantic_chunk(text, jsonb) IS
'Chunks a document where its meaning changes: sentence embeddings, distance curve, threshold, size guards.';

COMMENT ON FUNCTION knowledge.split_sentences(text) IS
'The sentences, headings and list items of a document, with 0-based character offsets.';

COMMENT ON FUNCTION knowledge.chunk_explain(text, jsonb) IS
'One row per sentence: distance from the previous sentence, smoothed distance, threshold, whether a chunk starts there and why.';
