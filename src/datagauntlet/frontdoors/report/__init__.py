"""Looking at runs: load eval, calibrate and verifiers outputs; write an HTML report; re-score."""
