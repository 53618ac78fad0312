"""``python -m arena``: the same as the ``arena`` command."""

from .cli.app import main

if __name__ == "__main__":
    main()
