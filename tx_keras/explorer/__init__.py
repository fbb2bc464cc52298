"""The Attention tab: a TensorBoard plugin over the raw attention weights the training callback logs.

`metadata` and `summary` are what training needs (tensorflow only); `plugin` is what TensorBoard loads
through the `tensorboard_plugins` entry point.
"""
