"""How the input pipeline batches rows: the values of `trainer.batching`, in a leaf module (no TensorFlow),
so the config check reads them before TensorFlow starts and the pipeline checks its argument against them."""

# fixed: rows padded to the batch's longest pair; bucket: token-budget length buckets (pipeline.py).
BATCHING = ("fixed", "bucket")
