"""Process-wide settings made before TensorFlow starts: quiet start-up, memory allocator."""
