"""event-recon's own gate rows, the checks of its worlds, and the gate report that the
docs table is rendered from.
"""
