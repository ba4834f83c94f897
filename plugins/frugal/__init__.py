"""``frugal``: placement advice that ranks rather than holds (docs/robust-policies.md)."""
