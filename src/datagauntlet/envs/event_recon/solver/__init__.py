"""Workspace-reading policies for event-recon: the reference solver and the graded-strength
policies. Every fact they use comes back from the episode's tools (see `policy`)."""
