"""The benchmarks: a shared harness, timing benchmarks and accuracy experiments."""
