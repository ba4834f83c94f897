"""Power policies for dedicated clusters (paper 001): timeouts, the OR* oracle and the PPO agent."""
