"""Publish: Parquet export/import (``parquet``), the dataset card (``card``), the Hugging Face
Hub (``hub``).

May import: ``schema``, ``errors``, ``digest``, ``sqlfiles``. Not ``api``/``cli``.
"""
