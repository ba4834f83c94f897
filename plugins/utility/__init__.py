"""Utility-based QoS and fair-share scheduling (paper 002): utilities, FIFO/EDF and SARSA."""
