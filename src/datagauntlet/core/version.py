"""The package version, stamped into every score (pyproject.toml's version; a test checks)."""

PACKAGE_VERSION = "0.1.0"
