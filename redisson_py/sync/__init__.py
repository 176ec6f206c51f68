"""The threaded shell. Its modules are generated from `redisson_py.asyncio` by
``scripts/generate_sync.py`` (all but `redisson_py.sync._primitives`); the public
names are exported by `redisson_py`."""
