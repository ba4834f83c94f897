"""Dedicated-cluster pool model (paper 001, sections 3 and 5): homogeneous nodes, rigid parallel
jobs, EASY backfilling, node power states with transition times, and days as episodes."""
