"""Queries: the paper's analyses as named SQL files plus the statistics SQL lacks (``stats``),
the driver ``analyses``, ``figures``, ``report``. The DynamicQA analyses are in
``ctxprior.dynamicqa.analyses``; ``analyses`` calls them for dynamic runs.

May import: ``schema``, ``dynamicqa`` (its analysis step), ``errors``, ``sqlfiles``. Not ``api``/``cli``.
"""
