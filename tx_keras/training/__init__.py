"""Training, by concern: `run/` (the job that checks a config and runs it, the run from data to summary.json,
its record and report), `step/` (loss, metrics, optimizer, schedule, precision, the step's threads),
`processes/` (the process group, devices, the peers' watch, stop signals) and `callbacks/` (what `fit`
calls: budgets, checkpoints, the dashboard). The trainer and logging groups' typed configs sit here, below
all four, which read them."""
