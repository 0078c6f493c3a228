"""The reference agent (`careful`) and the baselines, each seeing only what an agent sees."""
