"""The cleaning tool the agent writes for and `datagauntlet dataclean apply` runs: the
program of whitelisted operations, the engine that runs it on a table, and CSV in and out.
"""
