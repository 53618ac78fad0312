"""The optional C part: ``arena.process._fastpipe`` (one decision's write,
wait and read; ``arena/process/_fastpipe.c``).  Optional: where it cannot be
built (no C compiler) the arena installs without it and runs the same steps
in Python.  Everything else is in ``pyproject.toml``."""

from setuptools import Extension, setup

setup(ext_modules=[Extension("arena.process._fastpipe", ["arena/process/_fastpipe.c"], optional=True)])
