"""The cheap programs that try to score without following the task's own lines."""
