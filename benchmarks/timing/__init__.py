"""Timing and memory benchmarks: classes run by ``python -m benchmarks``, and scripts."""
