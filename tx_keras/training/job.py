"""One job of a sweep: skip it when already completed, and never let its failure stop the sweep."""

from __future__ import annotations

import logging
import os
import sys
from pathlib import Path

from omegaconf import DictConfig, OmegaConf

from tx_keras.config_check import ConfigError, check_components, check_config
from tx_keras.run_folder.disk_fault import disk_fault
from tx_keras.run_folder.summary import SUMMARY_NAME, completed_summary, summary_or_none, write_summary
from tx_keras.runtime.keras_backend import BackendMismatch, select_backend
from tx_keras.runtime.quiet_startup import start_tensorflow
from tx_keras.training.determinism import jax_flags
from tx_keras.training.run_report import run_report

_LOG = logging.getLogger("tx_keras.run")


def set_thread_budget(threads: int | None) -> None:
    """Give TensorFlow `threads` cores, so parallel jobs do not oversubscribe the machine.

    Environment variables, not `tf.config.threading`: a reused worker process has TensorFlow initialised
    already, and setting its thread pools a second time raises. The variables apply at first import.
    """
    if threads:
        os.environ.setdefault("TF_NUM_INTRAOP_THREADS", str(threads))
        os.environ.setdefault("TF_NUM_INTEROP_THREADS", "1")


def no_early_stopping_in_sweep(cfg: DictConfig) -> None:
    """A sweep's jobs train all their epochs unless `trainer.early_stopping.in_sweeps`: variants are
    compared at one budget. Set in the config itself, so summary.json and HParams show what ran."""
    settings = cfg.trainer.get("early_stopping")
    if settings is not None and not settings.get("in_sweeps", False):
        settings.patience = None


def report(run_dir: Path) -> None:
    """The end-of-run report of a single run, from its summary.json (console and train.log)."""
    summary = summary_or_none(run_dir)
    if summary is None:
        return
    for line in run_report(summary, run_dir):
        _LOG.info(line)


def run_job(cfg: DictConfig, run_dir: Path, isolate_failures: bool) -> float:
    """Run one configuration into `run_dir` and return its objective.

    The config is checked here, once per job (tx_keras/config_check.py), and TensorFlow started between
    the check that needs no import and the one that does. With `isolate_failures` (sweeps) a config error
    or an exception is recorded in summary.json as `failed` with the reason and NaN is returned, so the
    launcher goes on with the next job (the sweep ends with a table of its jobs). A single run ends with
    its report, failed or not.
    """
    if isolate_failures:
        no_early_stopping_in_sweep(cfg)
    done = completed_summary(run_dir, cfg.trainer.epochs)
    if done is not None:
        print(f"tx-train: {run_dir} already completed; skipped (delete its {SUMMARY_NAME} to rerun)")
        return float(done["metrics"].get(cfg.trainer.objective, float("nan")))
    try:  # the config's one check, before any data or model is built
        check_config(cfg)  # imports nothing: a typo fails in a second or two, before TensorFlow starts
        try:
            select_backend(cfg.trainer.backend)  # before Keras's first import, which reads it
            if cfg.trainer.backend == "jax":  # read when JAX starts its backends
                flags = jax_flags(os.environ.get("XLA_FLAGS", ""), cfg.trainer.deterministic)
                os.environ["XLA_FLAGS"] = flags
        except BackendMismatch as error:
            raise ConfigError(str(error)) from None
        start_tensorflow(cfg.logging.verbose)  # before anything imports it: its noise stays off stderr
        check_components(cfg.model)  # a user's own layer class: only importing it checks it
    except ConfigError as error:
        if not isolate_failures:
            raise  # tx-train prints it as one line and exits 2
        config = OmegaConf.to_container(cfg, resolve=True)
        write_summary(
            run_dir, {"status": "failed", "reason": f"config: {error}", "metrics": {}, "config": config}
        )
        print(f"tx-train: job {run_dir.name} failed: {error}", file=sys.stderr)
        return float("nan")

    import keras

    from tx_keras.training.run import run

    keras.backend.clear_session()  # jobs sharing a worker process must not share graphs or layer names
    try:
        objective = run(cfg, run_dir)
    except Exception as error:  # run() has recorded it as failed in summary.json
        _LOG.debug("the run failed", exc_info=True)  # the traceback, for train.log
        if disk_fault(error, run_dir) is not None:  # not recorded; a sweep's next jobs would fail alike
            raise
        if not isolate_failures:
            report(run_dir)
            raise
        print(f"tx-train: job {run_dir.name} failed: {type(error).__name__}: {error}", file=sys.stderr)
        return float("nan")
    if isolate_failures:
        _LOG.info("tx-train: job %s %s", run_dir.name, (summary_or_none(run_dir) or {}).get("status"))
    else:
        report(run_dir)
    return objective
