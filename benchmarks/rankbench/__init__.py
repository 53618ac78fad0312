"""Helpers of ``benchmarks/ranking.py``: graded players, simulation with a cache,
ranking methods, formats (round robin, matchmaking) and the pure evaluation."""
