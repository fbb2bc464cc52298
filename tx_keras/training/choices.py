"""The values the trainer's choice keys may take, in a leaf module (no TensorFlow, no Keras): the config
check reads them without importing training's Keras modules, and training builds from the same names.
(`trainer.batching`'s values belong to the pipeline: tx_keras/data/batching/__init__.py.)"""

# `trainer.schedule`: the paper's warm-up + inverse-sqrt decay, or a constant rate after a linear warm-up.
SCHEDULES = ("noam", "constant")
# `trainer.precision`: the Keras dtype policy of the run's model; auto picks by hardware and by whether
# the step is compiled (precision.py).
PRECISIONS = ("float32", "mixed_bfloat16", "mixed_float16", "auto")
# `trainer.distribution`: one device (or the engine's default), or every device of every process, each
# step's batch split between them (training/distribution.py).
DISTRIBUTIONS = ("none", "data_parallel")
