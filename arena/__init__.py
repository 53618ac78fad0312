"""arena: a tournament runner for Shanghai Rummy bots."""

__version__ = "0.1.0"
