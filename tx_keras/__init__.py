"""tx_keras: a Keras experiment suite that makes the Transformer lecture tangible.

Importing it (or any of its modules) changes nothing in the host process: TensorBoard imports the
Attention plugin, notebooks import the layers. What a command needs process-wide (the allocator, a quiet
TensorFlow start) its entry point sets up (tx_keras/cli, tx_keras/runtime).
"""

from importlib.metadata import version

__version__ = version("tx_keras")
