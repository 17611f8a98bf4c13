"""What the compiled code tells beyond the trace: kernel maps of lazy backwards, module paths, Triton IR, the autotuner's choices."""
