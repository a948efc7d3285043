"""What differs between the transformers releases the engine supports (``transformers>=4.56``).

transformers renamed the forward argument that carries the key/value cache: ``past_key_values``
up to 5.23, ``cache`` from 5.24 (the old name warns until 5.40, then it would fall into
``**kwargs`` and be ignored: the model would silently run without its cached prefix). The engine
asks the forward signature which name it takes, once per function, and checks after every pass
that the cache grew by the tokens it was given (``check_cache``), so a release that ignores the
cache fails loudly instead of scoring the wrong prompt.
"""

from __future__ import annotations

import functools
import inspect

NAMES = ("cache", "past_key_values")  # newest first


@functools.lru_cache(maxsize=64)
def _cache_name(fn) -> str:
    try:
        params = inspect.signature(fn).parameters
    except (TypeError, ValueError):  # no signature to read: the long-standing name
        return "past_key_values"
    for name in NAMES:
        if name in params:
            return name
    return "past_key_values"


def cache_arg(forward, cache) -> dict:
    """``{name: cache}`` for a model's ``forward`` (bound method or module), under the name that
    release takes."""
    fn = type(forward).forward if hasattr(type(forward), "forward") else forward  # the class's, not a patch
    return {_cache_name(getattr(fn, "__func__", fn)): cache}


def output_cache(out):
    """The cache a forward pass returned (``out.cache`` or ``out.past_key_values``)."""
    return next((out[name] for name in NAMES if out.get(name) is not None), None)


class CacheIgnored(RuntimeError):
    """A forward pass did not extend the key/value cache it was given."""


def check_cache(cache, expected: int, where: str) -> None:
    """Raise ``CacheIgnored`` unless ``cache`` now holds ``expected`` positions (host-side: no
    device sync)."""
    got = cache.get_seq_length()
    if int(got) != int(expected):
        import transformers

        raise CacheIgnored(
            f"{where}: the model's forward pass ignored the key/value cache it was given "
            f"(it holds {got} positions, expected {expected}; transformers {transformers.__version__}). "
            "ctxprior does not support this transformers release yet: pin the one in constraints.txt"
        )
