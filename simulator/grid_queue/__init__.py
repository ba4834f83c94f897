"""Paper 002's grid model: P identical processors fed by one queue, greedy allocation."""
