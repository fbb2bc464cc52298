"""The machine a figure is only true for, in a leaf module: tx-bench records it, and every pytest run
prints it in its header (a suite time means nothing without the CPU kind)."""

from __future__ import annotations

import datetime
import os
import platform
from pathlib import Path

import tensorflow as tf


def machine() -> dict:
    """What a figure is only true for: CPU model, cores, vector/bf16 instructions, GPUs, load, date."""
    try:
        cpuinfo = Path("/proc/cpuinfo").read_text()
    except OSError:
        cpuinfo = ""
    fields: dict[str, str] = {}
    for line in cpuinfo.splitlines():
        key, _, value = line.partition(":")
        fields.setdefault(key.strip(), value.strip())  # the first core's
    name = fields.get("model name") or platform.processor()
    if "cpu family" in fields:  # "AMD EPYC" alone names several kinds
        name += f" (family {fields['cpu family']} model {fields.get('model', '?')})"
    flags = set(fields.get("flags", "").split())
    return {
        "cpu": name,
        "cores": os.cpu_count(),
        "instructions": sorted(flags & {"avx2", "avx512f", "avx512_bf16", "amx_bf16", "fma"}),
        "gpus": [device.name for device in tf.config.list_physical_devices("GPU")],
        "load_average": [round(value, 2) for value in os.getloadavg()],
        "date": datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%d %H:%M UTC"),
    }
