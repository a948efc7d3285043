"""CLI command modules: each defines click commands and lists them in ``COMMANDS``; a command
parses its options, calls one method of the Python API (``ctxprior.api``), and prints.

Import rules: the package table in docs/architecture.md.
"""
