"""The stored reliance measures, each declared once: name, SQL type, description, how it is computed.

Table ``reliance`` (``schema/scores.py``) makes its columns from ``RELIANCE_MEASURES``; the dataset card
reads the descriptions (the column comments) and the ``mean`` texts of ``v_reliance_rates``; the
migration to a version adds the columns of the measures declared ``since`` it (``storage/migrations.py``);
the scoring side reads the names (``scoring/metrics.py``: ``RELIANCE_FLOATS``, ``RELIANCE_ANSWERS``,
the keys ``reliance_np`` and ``vocab_pass`` return; ``scoring/units.py`` writes them).
Layer 0 and free of SQLAlchemy (``Measure.column`` imports it when called), so the scoring engine
imports it on a GPU machine without the warehouse's packages (``tests/test_benchmarks.py``).
``tests/test_measures.py`` checks the rest against this list: ``schema/views/22_reliance.sql`` (the column
in ``v_reliance``, ``avg(name) AS mean_name`` in ``v_reliance_rates``); the table in docs/concepts.md
is written from it (``python scripts/docs_tables.py --update``, checked by ``tests/test_docs_tables.py``).
To add a measure: docs/architecture.md, "Where to add".
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from .sqlfiles import ident

if TYPE_CHECKING:
    from sqlalchemy import Column

_DDL_TYPES = ("DOUBLE", "INTEGER", "TEXT", "BOOLEAN")


def sql_types() -> dict:
    """The SQLAlchemy type of each declared SQL type name (imported here, not at the top: the
    scoring engine reads this module on machines without the warehouse's packages)."""
    from sqlalchemy import Boolean, Double, Integer, Text

    return {"DOUBLE": Double, "INTEGER": Integer, "TEXT": Text, "BOOLEAN": Boolean}


@dataclass(frozen=True)
class Measure:
    """One stored measure: a column of ``reliance``, one value per (run, query form, fact, context).

    ``computed``: ``float`` -- ``metrics.reliance_np`` (reference) and ``metrics.vocab_pass``
    (device) return it per context, NaN where it is undefined (stored NULL); ``finite`` ones are
    divergences that are always finite (the estimator checks them); ``answer`` -- an index in the
    answer space A, -1 where there is none (stored NULL); ``unit`` -- ``scoring/units.py`` derives it
    from those when it writes the rows; ``answer_set`` -- the measure ``of`` names computed over the
    query's candidate answers renormalised (ctxprior's variant: the answer-set estimator computes it,
    NULL under first-token). ``vocab``: always over the whole vocabulary at the first token of the
    answer after the prompt, as its source computes it, whatever ``--estimator`` is (the estimator
    decides what psi and chi are computed over, not what this column means). ``mean``: the card's
    text for ``v_reliance_rates.mean_<name>`` when that view averages it. ``since``: the schema
    version that added the column. ``source``: where the definition comes from (Markdown, shown
    only in docs/concepts.md's table, which ``scripts/docs_tables.py`` writes from this list)."""

    name: str
    sql_type: str
    description: str
    computed: str = "float"
    nullable: bool = True
    finite: bool = False
    mean: str | None = None
    since: int = 1
    vocab: bool = False
    of: str | None = None
    source: str = ""

    def column(self) -> Column:
        from sqlalchemy import Column

        return Column(self.name, sql_types()[self.sql_type], nullable=self.nullable, comment=self.description)


_A = "(first-token: a token id; answer-set: an index into the query's candidate answers)"
_V = " (over the whole vocabulary at the first answer token, whatever the estimator)"
_AS = (
    " over the query's candidate answers (the dataset's label set where it declares one), each scored "
    "in full and renormalised: ctxprior's variant, not the source's; NULL under first-token and in "
    "rows written before schema v4"
)


def _answer_set(of: str, what: str, mean: str | None = None) -> Measure:
    return Measure(
        f"{of}_answer_set",
        "DOUBLE",
        what + _AS,
        computed="answer_set",
        mean=mean,
        since=4,
        of=of,
        source=f"none: ctxprior's variant of `{of}`; its distance from the source's value is in "
        "[Departures](departures.md)",
    )


RELIANCE_MEASURES: tuple[Measure, ...] = (
    Measure(
        "shift",
        "DOUBLE",
        "KL(p(A|c,q(e)) || p(A|q(e)) of the no-context prompt) in nats: the shift the context "
        "causes against the prompt without context (inseq's contrastive KL; DRUID); not psi, whose "
        "reference is the mixture over the contexts" + _V + "; NULL in answer-set rows written "
        "before schema v4",
        finite=True,
        mean="mean KL(p(A|c,q(e)) || no-context p(A|q(e))) over the group, nats",
        vocab=True,
        source=(
            "the direction of inseq's contrastive `kl_divergence` step score (Sarti et al. 2023): KL(original ‖ "
            "contrast), the original input with the context, the contrast without it; the with/without-context "
            "comparison of DRUID (Hagström et al. 2025)"
        ),
    ),
    Measure(
        "jsd",
        "DOUBLE",
        "Jensen-Shannon divergence between p(A|c,q(e)) and the no-context p(A|q(e)), nats, "
        "0..ln 2 (AdaCAD's degree of conflict)" + _V + "; NULL in answer-set rows written before "
        "schema v4",
        finite=True,
        mean="mean JSD(p(A|c,q(e)), no-context p(A|q(e))) over the group, nats",
        vocab=True,
        source="AdaCAD (Wang et al. 2025): the degree of conflict that sets the contrastive weight",
    ),
    Measure(
        "confidence_gain",
        "DOUBLE",
        "CK-PLUG's Confidence Gain H(p~(A|q(e))) - H(p~(A|c,q(e))) in nats, both restricted to "
        "the tokens plausible in either (p >= 1% of the top token's, or among the top 10) and "
        "renormalized (negative: the context makes the model less sure, a sign of conflict)" + _V + "; "
        "NULL in rows written before schema v3, and in answer-set rows written before schema v4 "
        "(their candidate-set value moved to confidence_gain_answer_set)",
        finite=True,
        mean="mean CK-PLUG confidence gain (filtered to its plausible tokens, over the vocabulary at the "
        "first answer token) over the group, nats",
        vocab=True,
        source=(
            "Bi et al. 2025 (CK-PLUG), §3.1; `relative_top_filter` (relative_top 0.01, min_tokens_to_keep = "
            "select_top 10) and `IG = entropy_student − entropy` of `_ck_decoding` in "
            "`transformers-4.49/src/transformers/generation/utils.py` of github.com/byronBBL/CK-PLUG (the "
            "student is the prompt without context)"
        ),
    ),
    Measure(
        "confidence_gain_vocab",
        "DOUBLE",
        "H(no-context p(A|q(e))) - H(p(A|c,q(e))) in nats, unfiltered (the confidence gain without "
        "CK-PLUG's filter; schema v2's confidence_gain)" + _V,
        finite=True,
        mean="mean H(no-context) - H(with context) over the whole vocabulary, nats",
        since=3,
        vocab=True,
        source="the unfiltered form; schema v2's `confidence_gain`",
    ),
    Measure(
        "p_context_answer",
        "DOUBLE",
        "p(the answer this context supports | c, q(e)); NULL: none",
        source="ClashEval (Wu et al. 2024), context preference",
    ),
    Measure(
        "p_gold_answer",
        "DOUBLE",
        "p(the fact's gold answer | c, q(e)); NULL: none",
        source='Longpre et al. (2021), Du et al. (2024) App. D: the "original" answer',
    ),
    Measure(
        "p_prior_answer",
        "DOUBLE",
        "p(the prior's answer | c, q(e)), the prior's answer = the argmax of the no-context p(A|q(e))",
        nullable=False,
        source='ClashEval\'s "prior response"',
    ),
    Measure(
        "scaled_difference",
        "DOUBLE",
        "DRUID's scaled probability difference of the context's answer, -1..1: "
        "(p_c - p_0)/(1 - p_0) when the context raises it, (p_c - p_0)/p_0 when it lowers it, p the "
        "probability of the answer's first token after the prompt (CUB App. C eq. 1)" + _V + "; NULL: none",
        mean="mean DRUID scaled probability difference of the context's answer over the group",
        vocab=True,
        source=(
            "DRUID's scaled probability difference; CUB's CCU(t_C) (Hagström et al. 2025, App. C, eq. 1), with "
            "the probabilities of `src/get_model_predictions/get_model_predictions.py` of "
            "github.com/copenlu/context-utilisation-for-RAG (`softmax(logits)[tok_id]` of the first generated "
            "position)"
        ),
    ),
    Measure(
        "scaled_difference_memory",
        "DOUBLE",
        "the same scaled difference for the model's own no-context answer (the argmax of the "
        "no-context p(A|q(e))): CUB's CCU of an irrelevant context (v_reliance.ccu); NULL in rows "
        "written before schema v3" + _V,
        since=3,
        vocab=True,
        source="CUB's CCU(t_M), its measure for irrelevant contexts (App. C)",
    ),
    Measure("answer_top", "INTEGER", "argmax of p(A|c,q(e)) " + _A, computed="answer", nullable=False),
    Measure(
        "answer_prior",
        "INTEGER",
        "argmax of the no-context p(A|q(e)) " + _A,
        computed="answer",
        nullable=False,
    ),
    Measure(
        "answer_context",
        "INTEGER",
        "the answer this context supports " + _A + "; NULL: none",
        computed="answer",
    ),
    Measure("answer_gold", "INTEGER", "the fact's gold answer " + _A + "; NULL: none", computed="answer"),
    Measure(
        "outcome",
        "TEXT",
        "ORIGINAL (the gold answer; wins when the context states it too) | CONTEXT (the context's "
        "answer) | OTHER (neither), the label of the prompt's greedy generation by the rule in "
        "outcome_source (ConR / MemR / other rate / accuracy count these, as Longpre et al. 2021 and "
        "CK-PLUG do); NULL: undecided (the generation gives both answers) or not generated "
        "(outcome_source NULL: --outcome-rule none)",
        computed="unit",
        source=(
            "the outcomes of Longpre et al. (2021, §3: original / substitute / other) as CK-PLUG counts them: "
            "`eval` and `get_score` of `eval_NQ.py` in github.com/byronBBL/CK-PLUG (greedy, `max_new_tokens` 64,"
            " no stop words)"
        ),
    ),
    Measure(
        "outcome_source",
        "TEXT",
        "the rule that labelled the generation: recall (CK-PLUG eval_NQ.py get_score: the "
        "normalised answer inside the normalised generation; the default) | exact (Longpre et al. "
        "2021: exact match after normalisation) | prefix (the first line starts with the answer); "
        "rows written before schema v4: argmax | full-answer (the forced choice, as choice)",
        computed="unit",
        since=3,
        source=(
            "`recall`: CK-PLUG's `recall_score` (`eval_NQ.py`); `exact`: Longpre et al. 2021, with the "
            "normalisation of `normalize_text` in `src/utils.py` of github.com/apple/ml-knowledge-conflicts; "
            "`prefix`: ctxprior's reading of Du et al. App. D"
        ),
    ),
    Measure(
        "choice",
        "TEXT",
        "ctxprior's forced choice, not a source's outcome: ORIGINAL | CONTEXT | OTHER from the "
        "estimator's most probable answer or, where it cannot tell the gold and the context's answer "
        "apart, the full answers (choice_source); OTHER only when a third answer is on top",
        computed="unit",
        since=4,
        source="none: ctxprior's (the `outcome` of schema v3)",
    ),
    Measure(
        "choice_source",
        "TEXT",
        "what decided the choice: argmax (the estimator's most probable answer) | full-answer (a "
        "collision: the gold and the context's answer compared by their full-answer sequence "
        "probabilities after the prompt)",
        computed="unit",
        since=4,
        source="none: ctxprior's",
    ),
    Measure(
        "collision",
        "BOOLEAN",
        "the gold answer and the context's answer differ but the estimator reads them as one "
        "answer (first-token: they share their first token, e.g. ' 1977' / ' 1967'); NULL: the "
        "context supports no answer, or the row was written before schema v3",
        computed="unit",
        since=3,
        source="none: ctxprior's",
    ),
    Measure(
        "keeps_prior",
        "BOOLEAN",
        "the argmax with context equals the argmax without (ClashEval: the model keeps its prior "
        "answer); the estimator's answers, so on a collided row (collision) the shared first token",
        computed="unit",
        nullable=False,
        source="ClashEval (Wu et al. 2024)",
    ),
    _answer_set(
        "shift",
        "KL(p(A|c,q(e)) || no-context p(A|q(e))) in nats",
        mean="mean KL(with || without context) over the candidate answers, nats",
    ),
    _answer_set("jsd", "JSD(p(A|c,q(e)), no-context p(A|q(e))) in nats"),
    _answer_set(
        "confidence_gain",
        "H(no-context) - H(with context) in nats (CK-PLUG's filter applied to the candidates)",
        mean="mean confidence gain over the candidate answers, nats",
    ),
    _answer_set(
        "scaled_difference",
        "the scaled probability difference of the context's answer (NULL: none)",
        mean="mean scaled probability difference of the context's answer over the candidate answers",
    ),
    _answer_set(
        "scaled_difference_memory",
        "the scaled probability difference of the no-context argmax answer (v_reliance.ccu_answer_set "
        "for an irrelevant context)",
    ),
)


def answer_set_of() -> dict[str, str]:
    """{answer-set measure: the measure it is the answer-set variant of}."""
    return {m.name: m.of for m in RELIANCE_MEASURES if m.of is not None}


def measure_names(computed: str, finite: bool | None = None) -> tuple[str, ...]:
    """The names of the measures computed so (``finite``: only those that are / are not finite)."""
    return tuple(
        m.name for m in RELIANCE_MEASURES if m.computed == computed and (finite is None or m.finite == finite)
    )


def added_columns(version: int) -> list[str]:
    """The statements that add the measures declared ``since`` ``version`` to an older warehouse
    (the type is one of the fixed names of ``sql_types()``, the name quoted)."""
    return [
        f"ALTER TABLE reliance ADD COLUMN IF NOT EXISTS {ident(m.name)} {t}"
        for m in RELIANCE_MEASURES
        if m.since == version
        for t in _DDL_TYPES
        if t == m.sql_type
    ]
