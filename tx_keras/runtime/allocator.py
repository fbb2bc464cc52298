"""The C allocator of every tx_keras process, tuned so training steps stop paying a kernel-time tax.

TensorFlow's default CPU allocator takes each tensor from glibc malloc, which returns large freed blocks to
the kernel (munmap, heap trims) and faults them in again page by page when the next step allocates them.
The worst case was ours: `tf.data.Dataset.from_generator` (the old bucketed pipeline) calls
`mallopt(M_TRIM_THRESHOLD, 128 KiB)` for the whole process, which also pins glibc's mmap threshold at
128 KiB, so every tensor above that was mmapped anew each step (measured on the AVX2-only AMD EPYC kind:
~100,000 minor faults a second, 40 % of the CPU in the kernel). The pipeline no longer uses it
(tx_keras/data/pipeline.py); glibc's own dynamic thresholds still left ~15 % of the CPU in the kernel for
the tatoeba_small model, and keeping freed memory in the process brings that to ~3 %.

`configure_allocator()` is called by the commands that run TensorFlow (tx-train and each of its sweep
jobs, tx-bench, tx-export, tx-translate) before TensorFlow starts, never on import: a library leaves its
host's heap alone (TensorBoard imports the Attention plugin, notebooks import the layers, and a heap that
never shrinks is the wrong default for them). tx-board, tx-compare and tx-claims keep the system's. The
choice is the `TX_KERAS_ALLOCATOR` environment variable:

- `tuned` (default): glibc `mallopt(M_MMAP_MAX, 0)`, `mallopt(M_TRIM_THRESHOLD, -1)` and
  `mallopt(M_ARENA_MAX, 1)` through ctypes, so large buffers come from the heap and freed ones stay there
  for the next step. The arena limit matters because glibc serves every thread but the main one from an
  arena of 64 MB heaps and maps any larger block anew, whatever M_MMAP_MAX says: the (2, rows, h, T, d_k)
  decoding caches of the end-of-run evaluation are 70 MiB each (512 rows, 70 positions, d_model 256), and
  without the limit that evaluation spent half its CPU time in the kernel. One arena for every thread
  measured no slower for training on 2 cores (per CPU-second, tx-bench's real path); on many cores every
  thread's larger allocations share that arena's lock (docs/performance.md, "The allocator"). It works at
  run time (no re-exec); the cost is that the process keeps its peak heap until it exits. On a system
  without glibc it does nothing (and says so).
- `bfc`: TensorFlow's pooled BFC allocator for CPU tensors (`TF_CPU_ALLOCATOR_USE_BFC=true`); only takes
  effect when set before TensorFlow is imported. Measured: fewer faults than glibc's default, more than
  `tuned`.
- `system`: leave the allocator as it is (the behaviour before this module).
"""

from __future__ import annotations

import ctypes
import ctypes.util
import os
import sys

ENV = "TX_KERAS_ALLOCATOR"
CHOICES = ("tuned", "bfc", "system")
_M_TRIM_THRESHOLD = -1  # glibc <malloc.h>: free heap-top memory above this goes back to the kernel
_M_MMAP_MAX = -4  # glibc <malloc.h>: how many chunks may be mmap()ed at once; 0 = serve all from the heap
_M_ARENA_MAX = -8  # glibc <malloc.h>: how many arenas threads may use; 1 = the main one, which has no
# size limit (other arenas map blocks over 64 MB anew at every allocation)
_NEVER_TRIM = -1  # documented glibc value: never trim

_applied: str | None = None  # what configure_allocator did, for the run's log


def configure_allocator() -> str:
    """Apply the allocator `TX_KERAS_ALLOCATOR` names (once per process); returns a one-line account."""
    global _applied
    if _applied is None:
        _applied = _apply(os.environ.get(ENV, "tuned").strip().lower() or "tuned")
    return _applied


def applied() -> str:
    """What `configure_allocator` did in this process, without applying anything (a run's report)."""
    return _applied or "allocator: the system's as it is (not configured in this process)"


def _apply(choice: str) -> str:
    if choice not in CHOICES:
        return f"allocator: unknown {ENV}={choice!r} (choose one of {', '.join(CHOICES)}); left as it is"
    if choice == "system":
        return f"allocator: the system's as it is ({ENV}=system)"
    if choice == "bfc":
        late = " (too late: TensorFlow was imported first)" if "tensorflow" in sys.modules else ""
        os.environ["TF_CPU_ALLOCATOR_USE_BFC"] = "true"
        return f"allocator: TensorFlow's BFC pool for CPU tensors ({ENV}=bfc){late}"
    mallopt = _glibc_mallopt()
    if mallopt is None:
        return "allocator: the system's as it is (no glibc mallopt here)"
    settings = ((_M_ARENA_MAX, 1), (_M_MMAP_MAX, 0), (_M_TRIM_THRESHOLD, _NEVER_TRIM))
    if not all(mallopt(option, value) for option, value in settings):
        return "allocator: the system's as it is (glibc refused the mallopt settings)"
    return f"allocator: glibc malloc, one arena, mmap and trimming off ({ENV}=tuned; {ENV}=system: off)"


def _glibc_mallopt():
    """glibc's `int mallopt(int, int)`, or None off glibc (macOS, musl)."""
    try:
        if not os.confstr("CS_GNU_LIBC_VERSION"):
            return None
        libc = ctypes.CDLL(ctypes.util.find_library("c") or "libc.so.6")
        mallopt = libc.mallopt
    except (OSError, AttributeError, ValueError):
        return None
    mallopt.argtypes, mallopt.restype = [ctypes.c_int, ctypes.c_int], ctypes.c_int
    return mallopt
