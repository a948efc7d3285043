"""Publish: Parquet export/import (``parquet``), the dataset card (``card``), the Hugging Face
Hub (``hub``).

Import rules: the package table in docs/architecture.md.
"""
