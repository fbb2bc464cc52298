"""One HParams row per group of seeds, beside the rows of its runs, so TensorBoard shows the means too.

TensorBoard's HParams tab has one row per session (run folder) and no notion of seeds. `tx-compare` writes
a session per group under `<folder>/by_setting/<k>_<setting>/`: the group's hyper-parameters (its first
run's, without `seed`), the mean of each metric under the metric's own column (`final/<metric>`, as the
runs write it), and `status` "group of 3 seeds, sd <metric> 0.0434" for the compared metric. Filtering the
status column shows the groups alone or the runs alone.

Why the sd and n are in the status text: every run declares its own HParams columns (training/run/hparams.py)
and TensorBoard shows the columns of the first declaration it meets, a run's in practice (checked over
HTTP, also with a declaration of every column at the folder's root), so columns only groups declare stay
hidden. The sd of every metric and n are scalars of the group's session too (`group/<metric>_sd`,
`group/runs`: the Scalars tab) and in groups.csv / groups.json.
"""

from __future__ import annotations

import shutil
from pathlib import Path

import tensorflow as tf
from omegaconf import OmegaConf
from tensorboard.plugins.hparams import api as hp

from tx_keras.comparison.groups import Group, metric_summary
from tx_keras.run_folder.job_folder import job_folder
from tx_keras.run_folder.summary import summary_or_none
from tx_keras.training.run.hparams import HPARAM_GROUPS, flatten_hparams

FOLDER = "by_setting"
_MARKER = ".written_by_tx_compare"  # only a folder with it is ever replaced


def _hparams(group: Group) -> dict[str, object]:
    """The columns of the first run whose summary holds a whole run config, else the group's setting."""
    for run in group.runs:
        config = (summary_or_none(run.path) or {}).get("config")
        if _whole(config):
            flat = flatten_hparams(OmegaConf.create(config))
            flat.pop("seed", None)
            return flat
    return dict(group.setting)


def _whole(config: object) -> bool:
    """A config as tx-train records it: a seed and each HParams group; a damaged summary may hold any JSON."""
    return (
        isinstance(config, dict)
        and "seed" in config
        and all(isinstance(config.get(group), dict) for group in HPARAM_GROUPS)
    )


def _name(rank: int, group: Group) -> str:
    """`{rank}_{setting}`, cut as a sweep's job folders are: a preset with a corpus path, a budget and ten
    searched knobs passes the 255-byte file-name limit."""
    return job_folder(rank, ",".join(f"{key}={value}" for key, value in group.setting) or "all")


def write_group_sessions(out: Path, groups: list[Group], metrics: list[str]) -> Path | None:
    """Write the groups of more than one usable run as HParams sessions under out/by_setting (replacing
    what an earlier tx-compare wrote there); None when no group has two usable runs."""
    folder = out / FOLDER
    if folder.exists():
        if not (folder / _MARKER).exists():
            return None  # not ours: leave it alone
        shutil.rmtree(folder)
    chosen = [(rank, group) for rank, group in enumerate(groups) if group.summary.n > 1]
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
        spread = metric_summary(group.runs, metrics[0]).sd
        status = f"group of {len(group.runs)} seeds, sd {metrics[0]} {spread:.4g}"
        flat = {**_hparams(group), "status": status}
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
