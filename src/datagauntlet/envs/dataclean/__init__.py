"""dataclean: repair a corrupted table with a JSON program of safe, whitelisted operations."""
