"""Two pictures of a sweep: the validation curves overlaid, and the metric against each swept knob."""

from __future__ import annotations

import math
from pathlib import Path

from matplotlib.backends.backend_agg import FigureCanvasAgg
from matplotlib.figure import Figure
from tensorboard.backend.event_processing import event_accumulator
from tensorboard.util import tensor_util

from tx_keras.comparison.groups import BEST, TIED, Group, usable
from tx_keras.comparison.sweep_runs import RunRecord
from tx_keras.run_folder.atomic_write import write_figure


def validation_curve(run_dir: Path, tag: str = "epoch_loss") -> tuple[list[int], list[float]]:
    """A run's validation curve from its event files (all of them: a resumed run has several)."""
    folder = run_dir / "validation"
    if not folder.is_dir():
        return [], []
    events = event_accumulator.EventAccumulator(str(folder), size_guidance={event_accumulator.TENSORS: 0})
    events.Reload()
    if tag not in events.Tags()["tensors"]:
        return [], []
    records = sorted(events.Tensors(tag), key=lambda record: record.step)
    steps = [record.step + 1 for record in records]  # Keras counts epochs from 0
    return steps, [float(tensor_util.make_ndarray(r.tensor_proto)) for r in records]


def plot_curves(runs: list[RunRecord], path: Path) -> None:
    """Validation loss per epoch of every run, overlaid and labelled by the run's overrides."""
    figure = Figure(figsize=(8, 5), dpi=100)
    FigureCanvasAgg(figure)
    axes = figure.add_subplot()
    for run in runs:
        steps, values = validation_curve(run.path)
        if steps:
            label = ", ".join(f"{key}={value}" for key, value in run.overrides.items()) or run.name
            axes.plot(steps, values, marker="o", label=f"{label} ({run.status})")
    axes.set_xlabel("epoch")
    axes.set_ylabel("validation loss")
    axes.set_yscale("log")
    axes.legend(fontsize=7)
    figure.tight_layout()
    write_figure(path, figure)


def plot_metric_by_knob(runs: list[RunRecord], metric: str, path: Path) -> None:
    """One panel per swept knob: the metric of every run against that knob's value."""
    knobs = sorted({key for run in runs for key in run.overrides})
    figure = Figure(figsize=(4 * max(len(knobs), 1), 3.5), dpi=100)
    FigureCanvasAgg(figure)
    for i, knob in enumerate(knobs or ["run"]):
        axes = figure.add_subplot(1, max(len(knobs), 1), i + 1)
        points = [(run.overrides.get(knob, run.name), run.metrics.get(metric, math.nan)) for run in runs]
        labels = sorted({label for label, _ in points}, key=_natural)
        axes.scatter([labels.index(label) for label, _ in points], [value for _, value in points])
        axes.set_xticks(range(len(labels)), labels, rotation=30, fontsize=8)
        axes.set_xlabel(knob)
        axes.set_ylabel(metric)
    figure.tight_layout()
    write_figure(path, figure)


def plot_groups(groups: list[Group], knobs: list[str], metric: str, path: Path) -> None:
    """One column per group, best first: every run a dot, the mean with its 95 % interval as an error
    bar (black: the best and the groups the test cannot tell from it; grey: worse; none for one run)."""
    figure = Figure(figsize=(max(5.0, 0.6 * len(groups) + 2), 4.5), dpi=100)
    FigureCanvasAgg(figure)
    axes = figure.add_subplot()
    for x, group in enumerate(groups):
        values = [value for run in group.runs if (value := usable(run, metric)) is not None]
        axes.scatter([x] * len(values), values, color="tab:blue", alpha=0.6, s=18, zorder=3)
        interval = group.summary.interval
        if interval:
            color = "black" if group.verdict in (BEST, TIED) else "grey"
            low, high = group.summary.mean - interval[0], interval[1] - group.summary.mean
            axes.errorbar(
                x, group.summary.mean, yerr=[[low], [high]], fmt="_", color=color, markersize=16, capsize=4
            )
    labels = [" / ".join(dict(group.setting).get(knob, "") for knob in knobs) or "all" for group in groups]
    axes.set_xticks(range(len(groups)), labels, rotation=30 if len(groups) > 4 else 0, fontsize=8)
    axes.set_xlabel(" / ".join(knobs) or "setting")
    axes.set_ylabel(f"{metric} (95 % interval of the mean)")
    axes.grid(axis="y", alpha=0.3)
    figure.tight_layout()
    write_figure(path, figure)


def _natural(label: str) -> tuple[int, float | str]:
    """Numbers in numeric order, then words."""
    try:
        return (0, float(label))
    except ValueError:
        return (1, label)
