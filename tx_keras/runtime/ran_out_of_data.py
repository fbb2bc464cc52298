"""Keras's "Your input ran out of data" warning, silenced for one `fit` only.

Keras warns after each epoch of a dataset of unknown length; for bucketed or streamed batches that is the
normal end of an epoch (its batch count varies with a token budget), not a problem. The filter is scoped to
the call so a notebook that imports tx_keras keeps its own warning filters.
"""

from __future__ import annotations

import warnings
from collections.abc import Iterator
from contextlib import contextmanager


@contextmanager
def epoch_end_warning_silenced() -> Iterator[None]:
    """Within the block, Keras's end-of-epoch "ran out of data" warning is not shown."""
    with warnings.catch_warnings():
        warnings.filterwarnings("ignore", message="Your input ran out of data")
        yield
