"""The truth and its cache: append-only rollout files and the derived SQLite index."""
