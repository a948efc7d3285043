"""Errors a user can cause. The CLI prints them as one line and exits with code 2."""


class UserError(Exception):
    """Bad input from the user (file, option, warehouse state). Message = one line, actionable."""
