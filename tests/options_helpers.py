"""Bad values of declared options, made from each ``Option``'s declaration (its choices, range and
list rules), so a test never writes a value out of range by hand and a new option with a check is
walked without a line of test: shared by tests/test_command_options.py (every command) and
tests/test_score_options.py (``SCORE_OPTIONS``)."""

from __future__ import annotations

import pytest

from ctxprior.errors import UserError
from ctxprior.options import SEED_MAX

OUT_OF_CHOICES = "bogus"  # a name no declared choice has


def bad_values(opt) -> list[tuple[object, object]]:
    """(a bad API value, the same on the command line: text, or a tuple of texts for a repeated
    option) for each check the declaration makes: a name not among the choices; a repeated value
    or an empty list where a list is declared; each number just past a declared bound (below
    ``minimum``, at ``above``, past ``maximum``; a seed's past 64 bits, as DuckDB would overflow).
    An on/off flag, free text and a number without bounds have none."""
    bad: list[tuple[object, object]] = []
    names = opt.names()
    if opt.kind is bool:
        return bad
    if names and not opt.listed:
        value = (OUT_OF_CHOICES,) if opt.multiple else OUT_OF_CHOICES
        bad.append((value, value))
    if opt.listed:
        first = names[0] if names else "x"
        bad.append(((first, first), f"{first},{first}"))
        if opt.default:  # else an empty list is the API's "the default" (analyze's only)
            bad.append(((), ","))
        if names:
            bad.append(((OUT_OF_CHOICES,), OUT_OF_CHOICES))
    for n in out_of_range(opt):
        bad.append(((n,), (opt.text(n),)) if opt.multiple else (n, opt.text(n)))
    return bad


def out_of_range(opt) -> list[int | float]:
    """The numbers just past each bound ``opt`` declares (empty for a text option)."""
    if opt.kind not in (int, float):
        return []
    numbers: list[int | float] = []
    if opt.minimum is not None:
        numbers.append(opt.minimum - (1 if opt.kind is int else 0.5))
    if opt.above is not None:
        numbers.append(opt.above)
    if opt.maximum is not None:
        numbers.append(2**70 if opt.maximum == SEED_MAX else opt.maximum + 1)
    return numbers


def refusal(opt, value) -> str:
    """The one-line message the declaration's check gives ``value`` (both doors must give it)."""
    with pytest.raises(UserError) as e:
        opt.check(value)
    message = str(e.value)
    assert message.startswith(f"{opt.label} "), message
    return message
