"""``redisson-py demo``: worker processes contend for one lock around a shared counter.

The counter is incremented without atomicity (GET, then SET), so only the lock keeps
increments from being lost; the demo checks that none was, and measures how fast the
lock passes from one worker to the next. See `run_demo`.
"""

from __future__ import annotations

from redisson_py.demo.options import DemoError, DemoOptions
from redisson_py.demo.runner import DemoOutcome, run_demo
from redisson_py.demo.summary import Summary, format_summary

__all__ = ["DemoError", "DemoOptions", "DemoOutcome", "Summary", "format_summary", "run_demo"]
