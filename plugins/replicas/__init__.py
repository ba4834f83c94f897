"""Replica counts for replicable jobs (paper 003 sec. 4): fixed counts and a bandit."""
