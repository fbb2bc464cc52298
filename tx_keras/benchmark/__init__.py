"""`tx-bench`: our Transformer against Keras peers of the same size, timed on this machine."""
