"""The error for a run folder that cannot be read or continued."""

from tx_keras.user_error import UserError


class RunFolderError(UserError):
    """A run folder that cannot be continued: printed as one line, never as a traceback."""
