"""What one client knows, with no I/O: its settings and id (`client_state`), its holds
and their losses (`holds`, `group_holds`, `losses`), its lock events (`events`), and the
settings taken from a config (`options`). Imports nothing else of the core."""
