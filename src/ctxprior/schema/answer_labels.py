"""A dataset's answer space, where it declares one (``ingest table --answer-label``, a spec's
``answer_labels:`` list, the DRUID preset's True / False / None).

Under the answer-set estimator every open query of such a dataset is scored over exactly these
labels (``scoring/estimators.py``: ``answer_candidates``), not over the item's own gold and
passage answers, so an item whose passages all support its gold answer still has the whole label
set to choose from. A closed query's answer space is Yes / No, fixed by the query type.
"""

from sqlalchemy import Integer, Text

from .base import col, ref, table

answer_label = table(
    "answer_label",
    ref("dataset", pk=True),
    col("ordinal", Integer, "the label's position in the declared set", pk=True),
    col("label", Text, "an answer of the dataset's answer space, as declared", null=False),
    comment="One row per answer of a dataset's declared answer space (label set): every open query's "
    "candidate answers under the answer-set estimator.",
)
