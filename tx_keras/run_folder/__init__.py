"""The run folder: every file tx-train writes into a run and reads back, in one package.

`atomic_write` (the one way any file of the suite is written), `summary` (summary.json), `run_marker`
(run.json and the same-config check), `checkpoint` (checkpoints/last.npz), `event_rollback`, `resume`
(start a folder or continue it), `overrides` (Hydra's `.hydra/overrides.yaml`), `flatten` (dotted
config keys), `attention_format` and `attention_summaries` (the raw attention the Attention tab reads),
`run_lock` (one writer per folder), `fresh_folder` (a folder of its own for each run named by the clock) and
`disk_fault` (a full, read-only or vanished disk as one line). Import the module you need: this file imports
nothing, so the light ones stay light.
"""
