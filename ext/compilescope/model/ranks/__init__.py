"""Ranks of a distributed job: each rank's record, their comparison, the report and the merge."""
