"""A fresh process that frees and reallocates one buffer ten times, touching every page, as a training step
does with its large tensors, and prints the minor page faults of the last nine rounds: how the tests see
whether glibc maps such buffers anew at every step (the kernel-time tax of training)."""

from __future__ import annotations

import os
import subprocess
import sys

_SCRIPT = """
import ctypes, resource, threading
{setup}
libc = ctypes.CDLL("libc.so.6")
libc.malloc.restype, libc.malloc.argtypes = ctypes.c_void_p, [ctypes.c_size_t]
libc.free.argtypes = [ctypes.c_void_p]
def step():
    buffer = libc.malloc({size})
    ctypes.memset(buffer, 1, {size})
    libc.free(buffer)
def rounds():
    step()
    before = resource.getrusage(resource.RUSAGE_SELF).ru_minflt
    for _ in range(9):
        step()
    print(resource.getrusage(resource.RUSAGE_SELF).ru_minflt - before)
if {in_thread}:  # a thread of its own gets a glibc arena of its own, as TensorFlow's op threads do
    worker = threading.Thread(target=rounds)
    worker.start()
    worker.join()
else:
    rounds()
{after}
"""


def probe(
    setup: str, size: int, allocator: str | None, after: str = "", in_thread: bool = False
) -> list[str]:
    """The probe's output lines (the fault count first) after running `setup`, with TX_KERAS_ALLOCATOR set
    to `allocator` (None: unset, the default); `in_thread`: the rounds run in a new thread."""
    env = {k: v for k, v in os.environ.items() if k not in ("TX_KERAS_ALLOCATOR", "TF_CPU_ALLOCATOR_USE_BFC")}
    if allocator is not None:
        env["TX_KERAS_ALLOCATOR"] = allocator
    script = _SCRIPT.format(setup=setup, size=size, after=after, in_thread=in_thread)
    result = subprocess.run(
        [sys.executable, "-c", script], env=env, capture_output=True, text=True, timeout=300
    )
    assert result.returncode == 0, result.stderr[-2000:]
    return result.stdout.splitlines()
