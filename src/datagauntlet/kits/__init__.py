"""Reusable toolsets that own resources (SQL, workspace files, the Python sandbox)."""
