"""The errors a user can fix (a config value, a run folder): `tx-train` prints them as one line and exits 2,
where any other exception is a bug and keeps its traceback. A leaf every package may import."""


class UserError(ValueError):
    """A user's mistake, stated in one line that says what is wrong and what to do instead."""


class ConfigError(UserError):
    """A user's configuration mistake: printed as one line, never as a traceback."""
