"""Publish: Parquet export/import, dataset card, Hugging Face Hub upload."""
