"""Training: the run, its schedule, loss and metrics, and the dashboard callbacks."""
