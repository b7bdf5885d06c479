"""The results document and a run's files: records, the document written and read back
row by row, what is kept beside a run, the schema, the published layout."""
