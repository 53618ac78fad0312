"""The Shanghai Rummy rules engine: pure, deterministic, replayable.

Nothing here imports from the rest of arena; chance comes from an injected
``random.Random``.
"""
