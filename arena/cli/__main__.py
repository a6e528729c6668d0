"""``python -m arena.cli``: the ``arena`` command without its script."""

from arena.cli import main

main()
