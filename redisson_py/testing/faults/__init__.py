"""Tools that break things or load them: a reply-dropping proxy, and the workloads the
tests, the chaos suite and the demo run in other processes."""
