"""One HParams row per group of seeds, beside the rows of its runs, so TensorBoard shows the means too.

TensorBoard's HParams tab has one row per session (run folder) and no notion of seeds. `tx-compare` writes
a session per group under `<folder>/by_setting/<k>_<setting>/`: the group's hyper-parameters (its first
run's, without `seed`), `status` "group of N seeds", the mean of each metric under the metric's own column
(`final/<metric>`, as the runs write it) and its sd and n in columns of their own (`group/<metric>_sd`,
`group/runs`). Filtering the status column shows the groups alone or the runs alone.
"""

from __future__ import annotations

import shutil
from pathlib import Path

import tensorflow as tf
from omegaconf import OmegaConf
from tensorboard.plugins.hparams import api as hp

from tx_keras.comparison.groups import Group, metric_summary
from tx_keras.run_folder.summary import summary_or_none
from tx_keras.training.hparams import flatten_hparams

FOLDER = "by_setting"
_MARKER = ".written_by_tx_compare"  # only a folder with it is ever replaced


def _hparams(group: Group) -> dict[str, object]:
    for run in group.runs:
        config = (summary_or_none(run.path) or {}).get("config")
        if config:
            flat = flatten_hparams(OmegaConf.create(config))
            flat.pop("seed", None)
            return flat
    return dict(group.setting)


def _name(rank: int, group: Group) -> str:
    label = ",".join(f"{key}={value}" for key, value in group.setting) or "all"
    return f"{rank}_{label}".replace("/", "_")


def write_group_sessions(out: Path, groups: list[Group], metrics: list[str]) -> Path | None:
    """Write the groups of more than one run as HParams sessions under out/by_setting (replacing what an
    earlier tx-compare wrote there); None when no group has two runs."""
    folder = out / FOLDER
    if folder.exists():
        if not (folder / _MARKER).exists():
            return None  # not ours: leave it alone
        shutil.rmtree(folder)
    chosen = [(rank, group) for rank, group in enumerate(groups) if len(group.runs) > 1]
    if not chosen:
        return None
    folder.mkdir(parents=True)
    (folder / _MARKER).write_text("tx-compare writes the HParams rows of the groups here\n")
    columns = [hp.Metric("group/runs", display_name="runs in group")]
    for name in metrics:
        columns += [
            hp.Metric(f"final/{name}", display_name=name.replace("_", " ")),
            hp.Metric(f"group/{name}_sd", display_name=f"{name.replace('_', ' ')} sd"),
        ]
    for rank, group in chosen:
        flat = {**_hparams(group), "status": f"group of {len(group.runs)} seeds"}
        writer = tf.summary.create_file_writer(str(folder / _name(rank + 1, group)))
        with writer.as_default(), tf.summary.record_if(True):
            hp.hparams_config(hparams=[hp.HParam(name) for name in flat], metrics=columns)
            hp.hparams(flat)
            tf.summary.scalar("group/runs", len(group.runs), step=0)
            for name in metrics:
                summary = metric_summary(group.runs, name)
                if summary.n:
                    tf.summary.scalar(f"final/{name}", summary.mean, step=0)
                if summary.n > 1:
                    tf.summary.scalar(f"group/{name}_sd", summary.sd, step=0)
        writer.close()
    return folder
