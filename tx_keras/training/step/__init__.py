"""The training step: loss, metrics, optimizer, schedule, precision, step threads."""
