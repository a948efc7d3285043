"""Analyses that need Python beyond a SQL file and a standard comparison: one module each,
registered with ``@register_analysis`` (``analyses.registry`` imports every module here)."""
