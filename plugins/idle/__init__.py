"""Per-machine idle-time prediction with RandomForest and MLP, monthly retraining (paper 004)."""
