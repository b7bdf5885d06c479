"""Two runs compared row by row: their pairing, the paired comparison, by a column,
tokens and cost."""
