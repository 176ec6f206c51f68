"""pytest plugin (placeholder until the harness lands)."""
