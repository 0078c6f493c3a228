"""Reusable toolsets that own resources, shared by envs: `sql`, `workspace` (and `sandbox`).

A kit imports the core only, never an env or a front door.
"""
