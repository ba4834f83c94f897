"""n-armed-bandit placement (paper 000, section 4): estimators, rewards, hindsight, policies."""
