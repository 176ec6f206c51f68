"""redisson-py's benchmarks against the floor and the peer libraries.

Run ``python -m benchmarks`` from the repository root (see ``benchmarks/README.md``): it
starts its own redis-servers on 127.0.0.1 with the test harness, measures the baseline and
every peer in the same run against the same server, prints markdown tables and writes
``benchmarks/results/results.{json,md}`` and the plots. Measurements, not pass/fail tests.
"""
