"""Tournaments: the tournament file (``config``), the schedule (``schedule``), and running, storing and ranking them."""
