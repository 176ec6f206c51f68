"""``python -m redisson_py.cli``: the same as the ``redisson-py`` command."""

from redisson_py.cli import main

if __name__ == "__main__":
    raise SystemExit(main())
