"""The options of ``ctxprior build-dataset`` and of ``wh.datasets.build``, each declared once
(``ctxprior.options.Option``): the command's click arguments and options, the method's checks and
the defaults of ``kg_build.BuildOptions`` are made from them."""

from __future__ import annotations

from ..covariates.options import TRIPLES
from ..options import DATASET_NAME, Option, seed_option

REQUIRE_LABEL = ("both", "entity", "none")
ANSWER_CHOICE = ("random", "degree")
TRIPLE_FORMATS = ("auto", "nt", "ttl", "tsv")

BUILD_OPTIONS = (
    TRIPLES,
    Option("name", "--name", "Dataset name in the warehouse.", required=True, pattern=DATASET_NAME),
    Option(
        "relations",
        "--relations",
        "Relations file (YAML): predicates, query forms, context templates, class filters "
        "(format in docs/datasets.md; example: ctxprior/ingest/data/kg_relations.yaml).",
        required=True,
    ),
    Option(
        "labels",
        "--labels",
        "Extra triple file(s) read only for labels (rdfs:label, skos:prefLabel, schema:name); "
        "repeatable. Labels in TRIPLES are used too.",
        multiple=True,
        metavar="FILE",
    ),
    Option(
        "lang",
        "--lang",
        "Label language: labels tagged with it win over untagged ones; other languages are ignored.",
        default="en",
    ),
    Option(
        "entities_per_relation",
        "--entities-per-relation",
        "Keep this many entities per relation: the top ones by KG degree (ties broken by --seed).",
        default=1000,
        kind=int,
        maximum=10**7,
        minimum=1,
    ),
    seed_option(0, "Seed for breaking degree ties and for the random answer choice."),
    Option(
        "fmt",
        "--format",
        "Triple format of all files (auto: from each file name, .nt/.ttl/.tsv, optionally .gz).",
        default="auto",
        choices=TRIPLE_FORMATS,
    ),
    Option(
        "max_malformed",
        "--max-malformed",
        "Refuse the input when more than this fraction of its lines are not triples "
        "(fewer are skipped and reported with line numbers).",
        default=0.001,
        kind=float,
        minimum=0,
        maximum=1,
    ),
    Option(
        "require_label",
        "--require-label",
        "both: as the authors, drop facts whose entity or (IRI) answer has no label in --lang; "
        "entity: only entities need one; none: name unlabelled IRIs after their local name.",
        default="both",
        choices=REQUIRE_LABEL,
    ),
    Option(
        "answer_choice",
        "--answer-choice",
        "Which answer an entity with several gets. random: as the authors, one at random "
        "(seeded by --seed); degree: a labelled one with the highest KG degree.",
        default="random",
        choices=ANSWER_CHOICE,
    ),
)

DEFAULTS = {o.name: o.default for o in BUILD_OPTIONS}
