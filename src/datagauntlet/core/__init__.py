"""The shared core: seeding, episodes and tools, scores, the action log, runner and checks."""
