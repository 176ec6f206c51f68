"""Topologies: declarative specs, starting and stopping nodes, readiness, the client
configs they write, state files and teardown (what ``start_topology`` is made of)."""
