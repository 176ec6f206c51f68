"""``python -m benchmarks``: see :mod:`benchmarks.run`."""

from benchmarks.run import main

if __name__ == "__main__":  # spawned worker processes import this module too
    raise SystemExit(main())
