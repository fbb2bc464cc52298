"""The error for a corpus the user named but that cannot be used (missing, unreadable, no valid pairs)."""

from tx_keras.user_error import UserError


class CorpusError(UserError):
    """A corpus problem the user can fix (path, URL, checksum, columns, too few pairs), stated in one line."""
