"""`python -m ctxprior ...` runs the CLI."""

from .cli import main

main()
