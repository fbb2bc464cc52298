"""The Attention tab: a TensorBoard plugin over the raw attention weights the training callback logs.

`plugin` is what TensorBoard loads through the `tensorboard_plugins` entry point. The summaries' format
and their writer live in the run folder package (tx_keras/run_folder/attention_format.py,
attention_summaries.py): training writes them, and a lower package never imports this one.
"""
