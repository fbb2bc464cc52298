"""The run: `job` checks a config (`config_check`, into the typed `RunConfig`), starts the engine and calls
`orchestrator.run`, which reads the task, builds the model, fits, evaluates, exports and records the run."""
