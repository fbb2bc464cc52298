"""The run: the job, the config check, the run itself, its record and report."""
