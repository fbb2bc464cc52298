"""Process-wide settings made before TensorFlow starts: quiet start-up, memory allocator. Only the commands
(tx_keras/cli) import quiet_startup and call configure_allocator; the library modules do neither.
"""
