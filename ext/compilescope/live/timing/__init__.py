"""Timing live code: the user's own steps (real steps), single graphs and kernels, the device's peaks."""
