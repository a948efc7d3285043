"""Analyses: the paper's analyses as named SQL files plus the statistics SQL lacks (``stats``).

``registry`` knows every analysis (declared in the front matter of its ``.sql`` file, or a step
module in ``steps/``); ``driver`` runs them (``analyze``), ``comparisons`` holds the group tests,
``results`` writes the rows, ``summary`` prints them; ``figures`` and ``report`` draw them. The
DynamicQA analyses are in ``ctxprior.dynamicqa.analyses``; ``steps/dynamicqa.py`` calls them.

Import rules: the package table in docs/architecture.md.
"""
