"""CLI command modules: each defines click commands and lists them in ``COMMANDS``; a command
parses its options, calls the Python API (``ctxprior.api``) or one library function, and prints.

Import rules: the package table in docs/architecture.md.
"""
