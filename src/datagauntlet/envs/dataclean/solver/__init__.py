"""The reference policy (`oracle`, which follows the task's policy text) and the baselines."""
