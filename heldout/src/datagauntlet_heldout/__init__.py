"""Held-out defect families for datagauntlet's private splits (one module per env)."""
