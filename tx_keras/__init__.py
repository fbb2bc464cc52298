"""tx_keras: a Keras experiment suite that makes the Transformer lecture tangible.

Importing it (or any of its modules) changes nothing in the host process: TensorBoard imports the
Attention plugin, notebooks import the layers. What a command needs process-wide (the allocator, a quiet
TensorFlow start) its entry point sets up (tx_keras/cli, tx_keras/runtime).
"""


def __getattr__(name: str) -> str:
    """`tx_keras.__version__`, read from the package metadata on first use: importing importlib.metadata
    costs every `import tx_keras` 30-70 ms (measured with -X importtime) that most importers never need."""
    if name == "__version__":
        from importlib.metadata import version

        return version("tx_keras")
    raise AttributeError(f"module 'tx_keras' has no attribute {name!r}")
