"""Errors a user can cause. The CLI prints them as one line and exits with code 2."""


class UserError(Exception):
    """Bad input from the user (file, option, warehouse state). Message = one line, actionable."""


class ArgumentTypeError(UserError, TypeError):
    """An API call got an argument of the wrong type; the message names the argument and the
    expected type (a TypeError for Python code, a UserError for the CLI's one-line message)."""
