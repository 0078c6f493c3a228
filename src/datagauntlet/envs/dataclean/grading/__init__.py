"""Grading: the cleaned table against the clean truth, rows aligned by primary key."""
