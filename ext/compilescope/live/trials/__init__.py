"""What compilescope runs again on purpose: fixes tried, partitioners re-run, saved tensors measured."""
