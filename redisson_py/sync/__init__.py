"""The threaded shell. Its modules are generated from :mod:`redisson_py.asyncio` by
``scripts/generate_sync.py`` (all but :mod:`redisson_py.sync._primitives`); the public
names are exported by :mod:`redisson_py`."""
