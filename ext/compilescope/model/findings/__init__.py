"""Findings: what a capture's measurements and records say to change, ranked, with fixes and their trials."""
