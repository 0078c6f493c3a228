"""Grading: disposition, report, evidence and inspection from the warehouse and the action log."""
