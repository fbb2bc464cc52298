"""The names TensorBoard gives its event files, in a leaf module: finding them needs no TensorFlow."""

EVENTS_GLOB = "events.out.tfevents.*"
