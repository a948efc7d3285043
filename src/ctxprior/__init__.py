"""ctxprior: how much does a language model follow its context versus its prior?

The Python API (see ``ctxprior.api``)::

    import ctxprior
    wh = ctxprior.open("demo.duckdb")                  # a Warehouse, read-only unless write=True
    wh.sql("SELECT * FROM v_susceptibility")            # pandas DataFrame
    df = ctxprior.quick("smollm2-135m", "Q: What is the capital of {entity}?\\nA:",
                        ["France"], ["The capital of France is Rome.\\n"])
"""

from .version import __version__

_LAZY = ("open", "quick", "load_model", "migrate", "Warehouse", "Run", "Covariates")
__all__ = [*_LAZY, "__version__"]


def __getattr__(name: str):
    # imported on first use, so `import ctxprior` (and the CLI's start-up) stays light
    if name in _LAZY:
        from . import api

        return getattr(api, name)
    raise AttributeError(f"module 'ctxprior' has no attribute {name!r}")


def __dir__() -> list[str]:
    # tab completion and help(ctxprior) in a notebook list the lazily imported API too
    return sorted({*globals(), *_LAZY})
