"""Queries: the paper's analyses as named SQL files plus the statistics SQL lacks (``stats``),
the driver ``analyses``, ``figures``, ``report``. The DynamicQA analyses are in
``ctxprior.dynamicqa.analyses``; ``analyses`` calls them for dynamic runs.

Import rules: the package table in docs/architecture.md.
"""
