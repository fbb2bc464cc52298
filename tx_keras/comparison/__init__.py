"""Reading a sweep folder back: one record per run, tables and plots to compare them."""

from tx_keras.comparison.sweep_runs import RunRecord, collect_runs

__all__ = ["RunRecord", "collect_runs"]
