"""CLI command modules: each defines click commands and lists them in ``COMMANDS``; a command
parses its options, calls one method of the Python API (``ctxprior.api``), and prints.

May import of ctxprior only ``api``, ``errors`` and ``commands`` itself (``tests/test_one_door.py``).
"""
