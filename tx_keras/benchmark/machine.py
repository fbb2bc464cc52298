"""The machine a figure is only true for, in a leaf module: tx-bench records it, and every pytest run
prints it in its header (a suite time means nothing without the CPU kind)."""

from __future__ import annotations

import datetime
import os
import platform
from pathlib import Path

from tx_keras.runtime.accelerators import gpu_names
from tx_keras.runtime.cpu_flags import cpu_flags
from tx_keras.runtime.keras_backend import running_backend
from tx_keras.runtime.onednn import onednn_enabled

# The CPU flags that change which kernels run and how fast: vector width, bf16 and int8 dot products.
INSTRUCTIONS = {"avx2", "fma", "avx512f", "avx512_bf16", "avx512_vnni", "avx_vnni", "amx_bf16", "amx_tile"}

# How a report prints `onednn_enabled()`.
ONEDNN_STATES = {True: "on", False: "off", None: "unknown"}


def machine() -> dict:
    """What a figure is only true for: CPU model, cores, vector/bf16 instructions, the Keras backend and
    its GPUs, load, date. Asks TensorFlow about oneDNN only in a process that runs Keras on TensorFlow."""
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
    backend = running_backend()
    return {
        "cpu": name,
        "cores": os.cpu_count(),
        "instructions": sorted(cpu_flags() & INSTRUCTIONS),
        "backend": backend,
        "gpus": gpu_names(),
        "onednn": onednn_enabled() if backend == "tensorflow" else None,
        "onednn_env": os.environ.get("TF_ENABLE_ONEDNN_OPTS"),
        "load_average": [round(value, 2) for value in os.getloadavg()],
        "date": datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%d %H:%M UTC"),
    }
