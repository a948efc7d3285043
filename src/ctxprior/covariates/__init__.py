"""Covariates: corpus co-occurrence counts, KG degrees, and user tables keyed by warehouse keys."""
