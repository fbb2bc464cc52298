"""Processes and distribution: the group, the devices, the peers' watch, stop signals."""
