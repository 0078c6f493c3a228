"""The attack probes: each tries to score without doing the job."""
