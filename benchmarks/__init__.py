"""Benchmarks against torch and Triton on the GPU: see README.md."""
