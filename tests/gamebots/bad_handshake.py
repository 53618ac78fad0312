"""Answers 'start' with a greeting instead of 'ready'."""
import common

common.run(on_start=lambda msg: {"type": "hello", "name": "rude"})
