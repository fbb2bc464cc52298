"""The values the trainer's choice keys may take, in a leaf module (no TensorFlow, no Keras): the config
check reads them without importing training, and training builds from the same names."""

# `trainer.schedule`: the paper's warm-up + inverse-sqrt decay, or a constant rate after a linear warm-up.
SCHEDULES = ("noam", "constant")
# `trainer.precision`: the Keras dtype policy of the run's model; auto picks by hardware (precision.py).
PRECISIONS = ("float32", "mixed_bfloat16", "mixed_float16", "auto")
# `trainer.batching`: rows padded to the batch's longest pair, or token-budget length buckets (pipeline.py).
BATCHING = ("fixed", "bucket")
