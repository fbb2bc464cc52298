"""`tx-train`: compose the Hydra config, train one model (or a sweep of them), write the run folder."""

from __future__ import annotations

import logging
import os
import sys
import warnings

import hydra
from hydra.core.hydra_config import HydraConfig
from omegaconf import DictConfig

from tx_keras.run_folder.job_folder import register_job_folder
from tx_keras.runtime.allocator import configure_allocator
from tx_keras.runtime.quiet_startup import quiet_absl

register_job_folder()  # here too: a joblib or Ray worker imports this module, not always the config tree


def _thread_budget(hydra_cfg: DictConfig) -> int | None:
    """Cores per job: all of them for sequential jobs, split between parallel joblib or Ray jobs."""
    launcher = hydra_cfg.launcher
    if "n_jobs" in launcher:  # joblib
        jobs = launcher.n_jobs if launcher.n_jobs > 0 else os.cpu_count() or 1
        return max(1, (os.cpu_count() or 1) // jobs)
    if "ray" in launcher:
        return launcher.ray.remote.get("num_cpus") or 1
    return None


@hydra.main(version_base="1.3", config_path="pkg://tx_keras.conf", config_name="config")
def _train(cfg: DictConfig) -> float:
    # First, before anything starts TensorFlow; here, not in main(), so that every sweep worker applies it.
    allocator = configure_allocator(cfg.trainer.backend)
    from pathlib import Path

    from hydra.types import RunMode

    from tx_keras.run_folder.disk_fault import exit_on_disk_fault
    from tx_keras.run_folder.run_lock import RunFolderInUse, hold, release
    from tx_keras.training.processes.stop_signals import INTERRUPTED_EXIT_CODE, Interrupted, StopSignals
    from tx_keras.training.run.job import run_job, set_thread_budget
    from tx_keras.user_error import UserError

    hydra_cfg = HydraConfig.get()
    sweep = hydra_cfg.mode == RunMode.MULTIRUN
    run_dir = Path(hydra_cfg.runtime.output_dir)
    sweep_dir = hydra_cfg.sweep.dir
    resume_with = (
        f"the same command with hydra.sweep.dir={sweep_dir}" if sweep else f"tx-train resume={run_dir}"
    )
    try:
        # A single run holds its folder since before Hydra wrote into it (run_folder/run_folder_lock.py); a
        # sweep's job takes its own here.
        hold(run_dir)
        set_thread_budget(_thread_budget(hydra_cfg))
        logging.captureWarnings(True)  # Python warnings reach train.log too
        quiet_absl(cfg.logging.verbose)
        logging.getLogger("tx_keras.runtime").debug(allocator)  # in train.log (a post-mortem needs it)
        with StopSignals():  # run_job checks the config (a sweep records a bad job), then starts TensorFlow
            return run_job(cfg, run_dir, isolate_failures=sweep)
    except RunFolderInUse as error:
        what = f"job {run_dir.name} skipped" if sweep else "error"
        print(f"tx-train: {what}: {error}", file=sys.stderr)
        if sweep:  # another process (a resume typed by hand) runs this job: the sweep goes on without it
            return float("nan")
        sys.exit(2)
    except UserError as error:  # here, not in main(): Hydra would add a line of its own around it
        print(f"tx-train: error: {error}", file=sys.stderr)
        sys.exit(2)
    except Interrupted as stop:  # a sweep ends here too: its other jobs would be stopped the same way
        line = f"tx-train: interrupted by {stop}; resume with: {resume_with}"
        logging.getLogger("tx_keras.run").debug(line)  # train.log
        print(line, file=sys.stderr)
        sys.exit(INTERRUPTED_EXIT_CODE)
    except Exception as error:  # a disk fault ends a sweep too: its next jobs would meet the same disk
        exit_on_disk_fault(error, f"resume with: {resume_with}", run_dir)
        raise
    finally:
        if sweep:
            release(run_dir)  # workers run several jobs: this one's folder is free again


def _default_config() -> DictConfig | None:
    """The config with no overrides, for "did you mean" suggestions (None if even that fails)."""
    from hydra import compose, initialize_config_module

    try:
        with initialize_config_module(config_module="tx_keras.conf", version_base="1.3"):
            return compose(config_name="config")
    except Exception:  # suggestions are a courtesy; the error line itself must still be printed
        return None


def main() -> None:
    """Run Hydra, turning its multi-line composition errors into one line and exit code 2."""
    from hydra.errors import HydraException
    from omegaconf.errors import OmegaConfBaseException

    from tx_keras.run_folder.disk_fault import exit_on_disk_fault
    from tx_keras.training.run.error_line import error_line

    os.environ["HYDRA_FULL_ERROR"] = "1"  # let Hydra's errors reach us instead of printing them itself
    from tx_keras.launch.sweep_report import SweepReport

    os.environ.setdefault("RAY_AUTH_MODE", "disabled")  # a local Ray instance needs no token file
    # conf/hydra/launcher/ray.yaml deliberately replaces the plugin's `ray` config of the same name.
    warnings.filterwarnings("ignore", message=".*is validated against ConfigStore schema with the same name")
    from tx_keras.run_folder.resume_argv import resume_argv
    from tx_keras.user_error import UserError

    try:
        sys.argv[1:] = resume_argv(sys.argv[1:])  # `resume=RUN_DIR` -> that run's overrides and folder
        _train()
    except UserError as error:  # e.g. a run folder that cannot be continued, found before it is touched
        print(f"tx-train: error: {error}", file=sys.stderr)
        sys.exit(2)
    except (HydraException, OmegaConfBaseException) as error:
        message = str(error) + (f"\n{error.__cause__}" if error.__cause__ else "")
        print(f"tx-train: error: {error_line(message, _default_config())}", file=sys.stderr)
        sys.exit(2)
    except OSError as error:  # Hydra's own writes (`.hydra/`, train.log) before the run begins
        exit_on_disk_fault(error, "run the same command again")
        raise
    sys.exit(SweepReport.exit_code)


if __name__ == "__main__":
    main()
