"""tx_keras: a Keras experiment suite that makes the Transformer lecture tangible."""

from tx_keras.runtime.allocator import configure_allocator

configure_allocator()  # first, before TensorFlow allocates: every entry point, sweep worker and test gets it

__version__ = "0.1.0"
