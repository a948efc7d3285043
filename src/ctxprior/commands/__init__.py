"""CLI command modules. Each module defines click commands and lists them in ``COMMANDS``."""
