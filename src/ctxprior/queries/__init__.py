"""Queries: named SQL files, the statistics that run on their results, figures and reports."""
