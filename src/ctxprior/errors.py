"""Errors a user can cause. The CLI prints them as one line and exits with code 2.

A message names an option once for both doors with :func:`option`: the command line shows the
flag (``--overwrite``), the Python API the keyword (``overwrite=True``)."""

from __future__ import annotations

import re

_OPTION = re.compile(r"\[\[([^|\]]+)\|([^\]]+)\]\]")

# Set to 1 (or `ctxprior --verbose`): the libraries' own notices and progress bars show too
# (deprecation warnings, transformers' "Loading weights" bars), which ctxprior hides otherwise.
WARNINGS_ENV = "CTXPRIOR_WARNINGS"


def option(flag: str, keyword: str) -> str:
    """An option in a :class:`UserError` message, as each door spells it:
    ``option("--overwrite", "overwrite=True")``."""
    return f"[[{flag}|{keyword}]]"


class UserError(Exception):
    """Bad input from the user (file, option, warehouse state). Message = one line, actionable.
    ``str(e)`` is the Python API's wording; :meth:`cli_message` the command line's."""

    def __str__(self) -> str:
        return _OPTION.sub(r"\2", super().__str__())

    def cli_message(self) -> str:
        """The message with each :func:`option` written as its command-line flag."""
        return _OPTION.sub(r"\1", super().__str__())


class ArgumentTypeError(UserError, TypeError):
    """An API call got an argument of the wrong type; the message names the argument and the
    expected type (a TypeError for Python code, a UserError for the CLI's one-line message)."""
