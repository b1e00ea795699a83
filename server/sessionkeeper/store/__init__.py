"""The truth and its cache: append-only rollout files and the derived SQLite index.

It may import schema and the vocabulary only; `index` is its cache's seam, `remote` the shared server.
"""
