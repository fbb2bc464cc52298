"""Process-wide settings made before TensorFlow starts: quiet start-up, memory allocator, thread pools.
Importing any of these modules changes nothing; the commands (tx_keras/cli) call `start_tensorflow` and
`configure_allocator` when they run (tests/test_import_side_effects.py).
"""
