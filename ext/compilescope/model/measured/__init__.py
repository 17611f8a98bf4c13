"""What was measured and what it adds up to: times, the step and compile budgets, speedups, memory held."""
