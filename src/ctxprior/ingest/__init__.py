"""Ingest: one module per source format; each validates fully, then writes in one transaction."""
