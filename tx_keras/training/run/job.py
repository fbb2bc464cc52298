"""One job of a sweep: skip it when already completed, and never let its failure stop the sweep."""

from __future__ import annotations

import logging
import os
import sys
from dataclasses import replace
from pathlib import Path

from omegaconf import DictConfig, OmegaConf

from tx_keras.run_folder.disk_fault import disk_fault
from tx_keras.run_folder.summary import SUMMARY_NAME, completed_summary, summary_or_none, write_summary
from tx_keras.runtime.keras_backend import BackendMismatch, select_backend
from tx_keras.runtime.quiet_startup import start_tensorflow
from tx_keras.training.processes.device_split import split_host_for_jax, split_host_for_tensorflow
from tx_keras.training.processes.peer_watch import PeerWatch
from tx_keras.training.processes.process_group import ProcessGroup, join_processes
from tx_keras.training.run.config_check import check_components, check_config
from tx_keras.training.run.determinism import jax_flags
from tx_keras.training.run.report import run_report
from tx_keras.training.run.run_config import RunConfig
from tx_keras.training.step.step_threads import plan_step_threads
from tx_keras.training.trainer_config import TrainerConfig
from tx_keras.user_error import ConfigError, UserError

_LOG = logging.getLogger("tx_keras.run")


def set_thread_budget(threads: int | None) -> None:
    """Give TensorFlow `threads` cores, so parallel jobs do not oversubscribe the machine.

    Environment variables, not `tf.config.threading`: a reused worker process has TensorFlow initialised
    already, and setting its thread pools a second time raises. The variables apply at first import.
    """
    if threads:
        os.environ.setdefault("TF_NUM_INTRAOP_THREADS", str(threads))
        os.environ.setdefault("TF_NUM_INTEROP_THREADS", "1")


def no_early_stopping_in_sweep(run: RunConfig) -> RunConfig:
    """A sweep's jobs train all their epochs unless `trainer.early_stopping.in_sweeps`: variants are
    compared at one budget. Set in the config itself, so summary.json and HParams show what ran."""
    stopping = run.trainer.early_stopping
    if stopping.in_sweeps:
        return run
    return replace(run, trainer=replace(run.trainer, early_stopping=replace(stopping, patience=None)))


def start_engine(trainer: TrainerConfig, verbose: int) -> tuple[ProcessGroup, PeerWatch | None]:
    """Choose the backend, split the devices, start TensorFlow (and Keras), join the other processes:
    in that order, since each engine fixes its backend and devices when it starts. Returns the process
    group and, with several processes, the watch on the others."""
    try:
        group = trainer.process_group
        select_backend(trainer.backend)  # before Keras's first import, which reads it
    except (BackendMismatch, UserError) as error:
        raise ConfigError(str(error)) from None
    if trainer.backend == "jax":  # read when JAX starts its backends
        os.environ["XLA_FLAGS"] = jax_flags(os.environ.get("XLA_FLAGS", ""), trainer.deterministic)
        split_host_for_jax(trainer.devices)
    start_tensorflow(verbose)  # before anything imports it: its noise stays off stderr
    if trainer.backend == "tensorflow":
        split_host_for_tensorflow(trainer.devices)  # before TensorFlow's runtime starts
        _LOG.debug(plan_step_threads(trainer))  # likewise; in train.log
    watch = None
    if group.is_multi_process:
        join_processes(group)  # before JAX computes anything
        watch = PeerWatch(group).start()  # from now on, a process that dies ends the others in one line
    return group, watch


def report(run_dir: Path) -> None:
    """The end-of-run report of a single run, from its summary.json (console and train.log)."""
    summary = summary_or_none(run_dir)
    if summary is None:
        return
    for line in run_report(summary, run_dir):
        _LOG.info(line)


def run_job(cfg: DictConfig, run_dir: Path, isolate_failures: bool) -> float:
    """Run one configuration into `run_dir` and return its objective.

    The config is checked here, once per job (training/run/config_check.py), and TensorFlow started between
    the check that needs no import and the one that does; from here on the typed `RunConfig` is what
    the run reads, each function given the group it needs. With `isolate_failures` (sweeps) a config error
    or an exception is recorded in summary.json as `failed` with the reason and NaN is returned, so the
    launcher goes on with the next job (the sweep ends with a table of its jobs). A single run ends with
    its report, failed or not.
    """
    try:  # the config's one check, before any data or model is built
        run_config = check_config(cfg)  # imports nothing: a typo fails in a second or two, before TensorFlow
        if isolate_failures:
            run_config = no_early_stopping_in_sweep(run_config)
        trainer = run_config.trainer
        done = completed_summary(run_dir, trainer.epochs, trainer.max_steps)
        if done is not None:
            print(f"tx-train: {run_dir} already completed; skipped (delete its {SUMMARY_NAME} to rerun)")
            return float(done["metrics"].get(trainer.objective, float("nan")))
        group, watch = start_engine(trainer, run_config.logging.verbose)
        check_components(run_config.model)  # a user's own layer class: only importing it checks it
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

    from tx_keras.training.processes.distribution import data_parallel
    from tx_keras.training.run.orchestrator import run

    keras.backend.clear_session()  # jobs sharing a worker process must not share graphs or layer names
    try:
        with data_parallel(trainer, group.count):  # trainer.distribution: build, fit, evaluate in it
            objective = run(run_config, run_dir)
        if watch is not None:
            watch.stop()
    except Exception as error:  # run() has recorded it as failed in summary.json
        if watch is not None:
            watch.grace(5.0)  # a peer's death: the watch ends this process with its one line
            watch.stop(failed=True)
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
    elif group.is_writer:  # the others' folder is a private copy, gone when they exit
        report(run_dir)
    return objective
