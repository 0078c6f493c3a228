"""The table of one task: the three layouts, each cell clean and as it arrives, whole
columns at once, the task's aliases and duplicates, and the policy text the agent reads.
"""
