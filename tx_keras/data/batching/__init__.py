"""The input pipeline and its batching, in one package: how a split's rows become the batches `fit` reads.

- `input_batches`: the entry (`run_dataset`), tf.data (`pipeline`) or numpy (`numpy_batches`) batches;
- `length_batches`, `shape_classes`, `window_buckets`: which rows share a batch, and at which widths;
- `row_padding`, `replica_batches`, `batch_skip`: rows added for a shape or a replica, batches skipped on a
  resume; `train_stream`, `streamed_batches`: the same for a streamed corpus; `epoch_batches`: what an
  epoch looks like before it runs.

This `__init__` imports nothing: the values of `trainer.batching` live here, so the config check reads them
before TensorFlow starts and the pipeline checks its argument against them.
"""

# fixed: rows padded to the batch's longest pair; bucket: token-budget length buckets (pipeline.py).
BATCHING = ("fixed", "bucket")
