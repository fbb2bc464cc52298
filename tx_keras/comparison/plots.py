"""Two pictures of a sweep: the validation curves overlaid, and the metric against each swept knob."""

from __future__ import annotations

import math
from pathlib import Path

from matplotlib.backends.backend_agg import FigureCanvasAgg
from matplotlib.figure import Figure
from matplotlib.ticker import MaxNLocator
from tensorboard.backend.event_processing import event_accumulator
from tensorboard.util import tensor_util

from tx_keras.comparison.groups import BEST, TIED, Group, usable
from tx_keras.comparison.knob_value import knob_number, shown_value
from tx_keras.comparison.sweep_runs import RunRecord
from tx_keras.comparison.table import short_name
from tx_keras.run_folder.atomic_write import write_figure

LABEL_CHARS = 70  # a legend line longer than this names the run only
TICK_CHARS = 30  # a group tick longer than this names the group's runs
PANELS_PER_ROW = 4  # knob panels per row of the by-knob figure
LOG_SPAN = 8.0  # a positive numeric knob whose values span more than this ratio gets a log axis


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


def _varying(runs: list[RunRecord]) -> list[str]:
    """The knobs whose value differs between runs: one every run shares (the corpus path, a fixed
    override) is no axis and no label."""
    knobs = sorted({key for run in runs for key in run.overrides})
    return [knob for knob in knobs if len({run.overrides.get(knob) for run in runs}) > 1]


def _run_label(run: RunRecord, knobs: list[str]) -> str:
    """The run's name and its varying knobs, or its name alone where they would not fit a legend line
    (a ten-knob search: comparison.md has every trial's settings)."""
    name = short_name(run.name)
    set_here = [knob for knob in knobs if knob in run.overrides]
    values = ", ".join(f"{knob}={shown_value(run.overrides[knob])}" for knob in set_here)
    return f"{name}: {values}" if values and len(values) <= LABEL_CHARS else name


def plot_curves(runs: list[RunRecord], path: Path) -> None:
    """Validation loss per epoch of every run, overlaid and labelled by the run's overrides."""
    figure = Figure(figsize=(9, 5), dpi=100, layout="constrained")
    FigureCanvasAgg(figure)
    axes = figure.add_subplot()
    knobs = _varying(runs)
    for run in runs:
        steps, values = validation_curve(run.path)
        if steps:
            axes.plot(steps, values, marker="o", label=f"{_run_label(run, knobs)} ({run.status})")
    axes.set_xlabel("epoch")
    axes.set_ylabel("validation loss")
    axes.set_yscale("log")
    if axes.get_legend_handles_labels()[0]:
        figure.legend(fontsize=7, loc="outside right upper")
    write_figure(path, figure)


def _numeric(values: list[str]) -> list[float] | None:
    """The values as numbers when every one is a number (a depth, a rate), else None (a choice of words)."""
    numbers = [knob_number(value) for value in values]
    return None if any(number is None for number in numbers) else numbers  # type: ignore[return-value]


def plot_metric_by_knob(runs: list[RunRecord], metric: str, path: Path) -> None:
    """One panel per varying knob: the metric of every run against that knob's value, on a number axis
    for a numeric knob (log where its values span over 8x, as a searched rate does), else one tick per
    value; the colour is the run's order, so a search's late trials show where it converged."""
    knobs = _varying(runs) or ["run"]
    columns = min(len(knobs), PANELS_PER_ROW)
    rows = math.ceil(len(knobs) / columns)
    figure = Figure(figsize=(3.6 * columns + 1, 3.0 * rows), dpi=100, layout="constrained")
    FigureCanvasAgg(figure)
    order = list(range(len(runs)))
    scatter = None
    for i, knob in enumerate(knobs):
        axes = figure.add_subplot(rows, columns, i + 1)
        labels = [run.overrides.get(knob, short_name(run.name)) for run in runs]
        values = [run.metrics.get(metric, math.nan) for run in runs]
        numbers = _numeric(labels) if knob != "run" else None
        if numbers is not None:
            x = numbers
            positive = [number for number in numbers if number > 0]
            if len(positive) == len(numbers) and max(positive) / min(positive) > LOG_SPAN:
                axes.set_xscale("log")
        else:
            ticks = sorted(set(labels), key=_natural)
            x = [ticks.index(label) for label in labels]
            axes.set_xticks(range(len(ticks)), [shown_value(tick) for tick in ticks], rotation=30, fontsize=8)
        scatter = axes.scatter(x, values, c=order, cmap="viridis", vmin=0, vmax=max(order[-1], 1))
        axes.set_xlabel(knob)
        axes.set_ylabel(metric)
    if scatter is not None and len(runs) > 1:
        bar = figure.colorbar(scatter, ax=figure.axes, label="run (job order)", shrink=0.8)
        bar.ax.yaxis.set_major_locator(MaxNLocator(integer=True))
    write_figure(path, figure)


def _setting_label(group: Group, knobs: list[str]) -> str:
    """The group's values of the varying knobs, as one tick."""
    setting = dict(group.setting)
    return " / ".join(shown_value(setting.get(knob, "")) for knob in knobs) or "all"


def plot_groups(groups: list[Group], knobs: list[str], metric: str, path: Path) -> None:
    """One column per group, best first: every run a dot, the mean with its 95 % interval as an error
    bar (black: the best and the groups the test cannot tell from it; grey: worse; none for one run)."""
    figure = Figure(figsize=(max(5.0, 0.6 * len(groups) + 2), 4.5), dpi=100, layout="constrained")
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
    labels = [_setting_label(group, knobs) for group in groups]
    if any(len(label) > TICK_CHARS for label in labels):  # a search's ten knobs: name the runs instead
        labels = ["+".join(short_name(run.name) for run in group.runs) for group in groups]
        axes.set_xlabel("runs of each group (their settings: comparison.md)")
    else:
        axes.set_xlabel(" / ".join(knobs) or "setting")
    axes.set_xticks(range(len(groups)), labels, rotation=30 if len(groups) > 4 else 0, fontsize=8)
    axes.set_ylabel(f"{metric} (95 % interval of the mean)")
    axes.grid(axis="y", alpha=0.3)
    write_figure(path, figure)


def _natural(label: str) -> tuple[int, float | str]:
    """Numbers in numeric order, then words."""
    try:
        return (0, float(label))
    except ValueError:
        return (1, label)
