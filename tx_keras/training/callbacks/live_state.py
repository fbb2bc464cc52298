"""The model's variables as of the last step, for callbacks that read or set them inside an epoch."""

from __future__ import annotations

import keras


def sync_variables(model: keras.Model) -> None:
    """Make `model`'s variables (weights, optimizer, metrics) hold the values of the step just taken.

    On TensorFlow they always do. JAX's `fit` is stateless: inside an epoch it carries the state from step
    to step outside the variables (emptied meanwhile) and writes it back at the epoch's end. This writes
    it back now, and the next step reads its state from the variables again, so a callback may also
    assign one (the cool-down factor) between steps.
    """
    sync = getattr(model, "jax_state_sync", None)
    if sync is not None:
        sync()
