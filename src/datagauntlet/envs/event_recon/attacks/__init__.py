"""The cheapest policies against the reward: the workspace-only attacker and its
widenings, the probes and the cheap attacks.
"""
