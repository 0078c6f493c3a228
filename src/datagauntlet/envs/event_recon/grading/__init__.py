"""Grading: the correct ledger forward, the contract backward, the balance projection,
the graded run of the remediation script, and the score.
"""
