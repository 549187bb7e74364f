"""Wrappers: fixed-scale policy observations and the Stable-Baselines3 adapter (lazy)."""
