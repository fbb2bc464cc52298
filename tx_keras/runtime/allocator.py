"""The C allocator of every tx_keras process, tuned so training steps stop paying a kernel-time tax.

TensorFlow's default CPU allocator takes each tensor from glibc malloc, which returns large freed blocks to
the kernel (munmap, heap trims) and faults them in again page by page when the next step allocates them.
The worst case was ours: `tf.data.Dataset.from_generator` (the old bucketed pipeline) calls
`mallopt(M_TRIM_THRESHOLD, 128 KiB)` for the whole process, which also pins glibc's mmap threshold at
128 KiB, so every tensor above that was mmapped anew each step (measured on the AVX2-only AMD EPYC kind:
~100,000 minor faults a second, 40 % of the CPU in the kernel). The pipeline no longer uses it
(data/batching/pipeline.py); glibc's own dynamic thresholds still left ~15 % of the CPU in the kernel for
the tatoeba_small model, and keeping freed memory in the process brings that to ~3 %.

`configure_allocator()` is called by the commands that run TensorFlow (tx-train and each of its sweep
jobs, tx-bench, tx-export, tx-translate) before TensorFlow makes its first tensor, never on import: a
library leaves its host's heap alone (TensorBoard imports the Attention plugin, notebooks import the layers,
and a heap that never shrinks is the wrong default for them). tx-board, tx-compare and tx-claims keep the
system's. The choice is the `TX_KERAS_ALLOCATOR` environment variable:

- `tuned` (default): TensorFlow's pooled BFC allocator for CPU tensors (`TF_CPU_ALLOCATOR_USE_BFC=true`,
  unless the user set that variable), and glibc `mallopt(M_MMAP_MAX, 0)`, `mallopt(M_TRIM_THRESHOLD, -1)`
  through ctypes for what else the process allocates. Tensors then come from regions TensorFlow keeps,
  whatever thread asks: a (2, rows, h, T, d_k) decoding cache over 64 MB no longer maps anew at every beam
  step (glibc serves threads other than the main one from arenas of 64 MB heaps and maps larger blocks
  anew whatever M_MMAP_MAX says: the evaluation that spent half its CPU in the kernel), and each thread
  keeps its own glibc arena for the small allocations every op makes (the executor's bookkeeping, each
  tensor's buffer record). One glibc arena for every thread (`M_ARENA_MAX=1`) instead of the pool made the
  two decoding loops wait on that arena's lock (docs/decisions/allocator-bfc-pool.md has the figures).
  It takes effect when set before TensorFlow's first
  tensor (importing TensorFlow is early enough); the cost is that the process keeps its peak heap until it
  exits, and the pool holds at most 64 GB of tensors (TensorFlow's default, `TF_CPU_BFC_MEM_LIMIT_IN_MB`).
  Off glibc only the pool applies (and the account says so). In a JAX run the pool holds what TensorFlow
  makes (tf.data's batches), not JAX's arrays, which XLA allocates: the account says that too, and
  without TensorFlow installed it names no pool.
- `bfc`: the pool alone, glibc as it is.
- `system`: leave the allocator as it is (the behaviour before this module).
"""

from __future__ import annotations

import ctypes
import ctypes.util
import os

from tx_keras.runtime.tensorflow_presence import tensorflow_installed

ENV = "TX_KERAS_ALLOCATOR"
CHOICES = ("tuned", "bfc", "system")
_M_TRIM_THRESHOLD = -1  # glibc <malloc.h>: free heap-top memory above this goes back to the kernel
_M_MMAP_MAX = -4  # glibc <malloc.h>: how many chunks may be mmap()ed at once; 0 = serve all from the heap
_NEVER_TRIM = -1  # documented glibc value: never trim
_POOL_VARIABLE = "TF_CPU_ALLOCATOR_USE_BFC"  # read by TensorFlow when it makes its CPU allocator

_applied: str | None = None  # what configure_allocator did, for the run's log


def configure_allocator(backend: str = "tensorflow") -> str:
    """Apply the allocator `TX_KERAS_ALLOCATOR` names (once per process); returns a one-line account of
    it for a process whose Keras runs on `backend`."""
    global _applied
    if _applied is None:
        _applied = _apply(os.environ.get(ENV, "tuned").strip().lower() or "tuned", backend)
    return _applied


def applied() -> str:
    """What `configure_allocator` did in this process, without applying anything (a run's report)."""
    return _applied or "allocator: the system's as it is (not configured in this process)"


def _apply(choice: str, backend: str) -> str:
    if choice not in CHOICES:
        return f"allocator: unknown {ENV}={choice!r} (choose one of {', '.join(CHOICES)}); left as it is"
    if choice == "system":
        return f"allocator: the system's as it is ({ENV}=system)"
    pool = _tensorflow_pool(backend)
    if choice == "bfc":
        return f"allocator: {pool} ({ENV}=bfc)"
    mallopt = _glibc_mallopt()
    if mallopt is None:
        return f"allocator: {pool}, the system's malloc (no glibc mallopt here)"
    settings = ((_M_MMAP_MAX, 0), (_M_TRIM_THRESHOLD, _NEVER_TRIM))
    if not all(mallopt(option, value) for option, value in settings):
        return f"allocator: {pool}, the system's malloc (glibc refused the mallopt settings)"
    return (
        f"allocator: {pool}, glibc malloc with mmap and trimming off, an arena per thread "
        f"({ENV}=tuned; {ENV}=system: off)"
    )


def _tensorflow_pool(backend: str) -> str:
    """Ask TensorFlow for its BFC pool of CPU tensors, unless the user's TF_CPU_ALLOCATOR_USE_BFC says;
    the account names what the pool holds on `backend`."""
    given = os.environ.setdefault(_POOL_VARIABLE, "true")
    if not tensorflow_installed():
        return "no TensorFlow pool (TensorFlow is not installed)"
    if given.strip().lower() not in ("true", "1"):  # as TensorFlow reads a boolean variable
        return f"TensorFlow's own CPU allocator ({_POOL_VARIABLE}={given})"
    if backend == "tensorflow":
        return "TensorFlow's BFC pool for CPU tensors"
    return f"TensorFlow's BFC pool for tf.data's CPU tensors ({backend}'s arrays: XLA's own allocator)"


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
