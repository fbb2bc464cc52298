"""The base of every error a user can fix (a config value, a run folder): `tx-train` prints it as one
line and exits 2, where any other exception is a bug and keeps its traceback."""


class UserError(ValueError):
    """A user's mistake, stated in one line that says what is wrong and what to do instead."""
