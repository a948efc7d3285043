"""The column mapping of ``ingest table``, its keys declared once: each is a field of
:class:`Mapping` (name, type, default) made with :func:`key` (help, flag, choices, its spec type).
The options of ``ingest table`` (``MAPPING_PARAMS``: the CLI's and ``wh.datasets.ingest``'s) and
the schema of its spec file (``Spec``, pydantic, strict: ``question: 5`` is refused, not read as
``"5"``) are made from those fields; :func:`mapping` fills a ``Mapping`` from both.

``read_spec`` reads the file with ``inputs.loads_yaml`` (bounded: no aliases, depth, size, digits,
duplicated keys) and returns the validated values as plain data; every problem is one line naming
the field: ``--spec s.yaml: question must be a string (got 5)``."""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Callable
from dataclasses import dataclass, field, fields
from pathlib import Path
from typing import Annotated, Any

from pydantic import (
    BaseModel,
    BeforeValidator,
    ConfigDict,
    StrictStr,
    create_model,
    field_validator,
    model_validator,
)

from ..errors import UserError
from ..inputs import check_input, loads_yaml, read_input, validated
from ..options import Option, by_name
from .builder import SEPARATOR
from .registry import Param

SHAPES = ("contexts", "facts")
OPEN_FORMAT = "Q: {question}\nA:"
CLOSED_FORMAT = "Q: {question} Is it {answer}?\nA:"
_STRICT = ConfigDict(extra="forbid", strict=True)
CONTEXT_FORM = "a mapping {type, text, answer} or TYPE=TEXT_COLUMN[:ANSWER_COLUMN]"


# -- values: an option's (repeatable: a tuple of text) and a spec's ---------------------------------


def _pairs(values, option: str, sep: str = "=") -> list[tuple[str, str]]:
    out = []
    for v in values or ():
        k, found, rest = str(v).partition(sep)
        if not found or not k.strip() or not rest.strip():
            raise UserError(f"{option} {v}: expected TYPE{sep}VALUE")
        out.append((k.strip(), rest))
    return out


def _wide(values) -> list[tuple[str, str, str | None]]:
    """``--context TYPE=TEXT_COLUMN[:ANSWER_COLUMN]`` values as (type, text column, answer column)."""
    return [(t, v.partition(":")[0], v.partition(":")[2] or None) for t, v in _pairs(values, "--context")]


def _labels(values: Any) -> Any:
    """``[LABEL, LABEL=TYPE, ...]`` as {label: type} (a spec's mapping as it is)."""
    if not isinstance(values, (list, tuple)):
        return values
    if not all(isinstance(x, str) for x in values):
        raise ValueError("must be a list of LABEL or LABEL=TYPE strings, or a mapping LABEL: TYPE")
    return {v.partition("=")[0]: v.partition("=")[2] or v.partition("=")[0] for v in values}


def _templates(values) -> dict[str, list[str]]:
    """``--context-template TYPE=TEMPLATE`` values grouped by type."""
    out: dict[str, list[str]] = defaultdict(list)
    for t, v in _pairs(values, "--context-template"):
        out[t].append(v)
    return dict(out)


def _template_lists(v: Any) -> Any:
    """``{TYPE: TEMPLATE}`` or ``{TYPE: [TEMPLATE, ...]}``: a single template as a list of one."""
    if isinstance(v, dict):
        return {k: [t] if isinstance(t, str) else t for k, t in v.items()}
    return v


class SpecContext(BaseModel):
    """A passage column of the wide layout."""

    model_config = _STRICT
    type: StrictStr
    text: StrictStr
    answer: StrictStr | None = None

    @model_validator(mode="before")
    @classmethod
    def _from_text(cls, v: Any) -> Any:
        if isinstance(v, str):
            kind, found, rest = v.partition("=")
            if not found or not kind.strip() or not rest.strip():
                raise ValueError(f"must be {CONTEXT_FORM}")
            text, _, answer = rest.partition(":")
            return {"type": kind.strip(), "text": text, "answer": answer or None}
        if not isinstance(v, dict):
            raise ValueError(f"must be {CONTEXT_FORM}")
        return v


class SpecRelation(BaseModel):
    """One relation's own templates (``--shape facts``)."""

    model_config = _STRICT
    query_templates: list[StrictStr] | None = None
    context_templates: dict[StrictStr, list[StrictStr]] | None = None

    _lists = field_validator("context_templates", mode="before")(lambda cls, v: _template_lists(v))


# -- the keys ----------------------------------------------------------------------------------------


def key(
    default: Any = None,
    help: str | None = None,
    metavar: str | None = "COL",
    *,
    multiple: bool = False,
    choices: tuple[str, ...] = (),
    spec: Any = None,
    value: Callable[[Any], Any] | None = None,
) -> Any:
    """A key of the mapping, as a field of :class:`Mapping` (its default; an empty list or dict is
    a new one per mapping). With ``help`` it is an option too, ``--`` and its name with dashes
    (repeatable, ``multiple``: the name of one value, ``--context`` for ``contexts``), with its
    ``metavar`` and ``choices``; ``value`` turns the option's value into the mapping's (default: a
    repeatable one's tuple as a list). ``spec``: its type in a spec file (default: a string, a list
    of strings if repeatable)."""
    meta: dict[str, Any] = dict(help=help, metavar=metavar, multiple=multiple, choices=choices)
    meta.update(
        spec=spec or (list[StrictStr] if multiple else StrictStr), value=value or (list if multiple else None)
    )
    if isinstance(default, (list, dict)):
        return field(default_factory=type(default), metadata=meta)
    return field(default=default, metadata=meta)


@dataclass
class Mapping:
    """Which columns hold what (``table.py``'s docstring): the keys of a spec file and, with their
    help, the options of ``ingest table`` (by their API names), in this order; then what only a
    preset sets."""

    shape: str = key(
        "contexts",
        "contexts: items with fixed passages (default); facts: templated facts.",
        None,
        choices=SHAPES,
    )
    item: str | None = key(
        None, "Column of each item's key (default: the row number; rows per passage: the question)."
    )
    question: str | None = key(None, "Column of each item's question (--shape contexts).")
    entity: str | None = key(None, "Column of the entity (facts: required; items: default the question).")
    gold: str | None = key(None, "Column of each item's gold answer (a list: its first).")
    contexts: list[tuple[str, str, str | None]] = key(
        [],
        "A passage column per row: TYPE=TEXT_COLUMN[:ANSWER_COLUMN], e.g. gold=org_context:org_answer; repeatable.",
        "TYPE=COL[:COL]",
        multiple=True,
        spec=list[SpecContext],
        value=_wide,
    )  # (type, text column, answer column)
    context_list: str | None = key(
        None,
        "Column holding a list of passage objects (keys: --context-text, --context-label, --context-answer).",
    )
    context_text: str | None = key(
        None, "Column (or list key) of a passage's text, with a row (or list element) per passage."
    )
    context_label: str | None = key(None, "Column (or list key) of a passage's label.")
    context_answer: str | None = key(
        None, "Column (or list key) of the answer a passage supports (optional)."
    )
    context_type: str | None = key(
        None,
        "Column (or list key) of a passage's type, where the data holds it "
        "(default: the type --label maps its label to).",
    )  # else: labels[label]
    labels: dict[str, str] = key(
        {},
        "A passage label the mapping knows, kept or mapped to a type: "
        "LABEL or LABEL=TYPE (e.g. supports=gold); repeatable. Another label is an error.",
        "LABEL[=TYPE]",
        multiple=True,
        spec=Annotated[dict[StrictStr, StrictStr], BeforeValidator(_labels)],
        value=_labels,
    )  # dataset label -> type
    answer_labels: list[str] = key(
        [],
        "An answer of the dataset's answer space (e.g. True, False, None), repeatable: under "
        "the answer-set estimator every open query is scored over these labels (not over its "
        "own gold and passage answers); each gold and passage answer must be one of them.",
        "LABEL",
        multiple=True,
    )  # the answer space (schema/answer_labels.py)
    query_format: str = key(
        OPEN_FORMAT, "The open query form of an item, with {question}. Default: 'Q: {question}\\nA:'.", "TEXT"
    )
    closed_format: str | None = key(
        CLOSED_FORMAT,
        "The closed query form of an item, with {question} and {answer}; '' (empty) for none, "
        "so items get the open form only. Default: 'Q: {question} Is it {answer}?\\nA:'.",
        "TEXT",
    )
    separator: str = key(
        SEPARATOR,
        "What joins a passage (context) to the query in every prompt: passage + separator + query; "
        "recorded with the dataset. Default: a newline; '' for none; \\n and \\t escapes allowed.",
        "TEXT",
    )  # builder.SEPARATOR
    relation: str | None = key(None, "Column of each fact's relation (--shape facts).")
    answer: str | None = key(None, "Column of each fact's answer (--shape facts).")
    query_templates: list[str] = key(
        [],
        "A query template of every relation with {entity} ({answer} too: a closed form) (--shape facts); repeatable.",
        "TEMPLATE",
        multiple=True,
    )
    context_templates: dict[str, list[str]] = key(
        {},
        "A context template of every relation, TYPE=TEMPLATE with {entity} and {answer} (--shape facts); repeatable.",
        "TYPE=TEMPLATE",
        multiple=True,
        spec=Annotated[dict[StrictStr, list[StrictStr]], BeforeValidator(_template_lists)],
        value=_templates,
    )
    relations: dict[str, dict] = key({}, spec=dict[StrictStr, SpecRelation])  # a relation's own templates
    source_format: str = key("table")
    description: str | None = key()
    derive: Callable[[dict], dict] | None = None  # a preset's record -> flat record
    skip: Callable[[dict], bool] | None = None  # a preset's rows to leave out (skip_note says which)
    skip_note: str = ""


KEYS = {f.name: f for f in fields(Mapping) if f.metadata}
MAPPING_PARAMS: tuple[Option, ...] = tuple(
    Param(
        f.name,
        "--" + (f.name.removesuffix("s") if f.metadata["multiple"] else f.name).replace("_", "-"),
        f.metadata["help"],
        metavar=f.metadata["metavar"],
        multiple=f.metadata["multiple"],
        choices=f.metadata["choices"],
    )
    for f in KEYS.values()
    if f.metadata["help"]
)
"""The options of ``ingest table`` (every key with a help); None (not given) by default: a spec's
value or the mapping's default applies."""
SEPARATOR_PARAM = by_name(MAPPING_PARAMS)["separator"]


_SPEC_FIELDS: dict[str, Any] = {k: (f.metadata["spec"] | None, None) for k, f in KEYS.items()}
Spec: type[BaseModel] = create_model(
    "Spec",
    __config__=_STRICT,
    __doc__="Every key a spec file may hold (the options of ``ingest table``, by their API names).",
    **_SPEC_FIELDS,
)


# -- the mapping from a spec file and the options ----------------------------------------------------


def mapping(spec: str | None = None, **options: Any) -> Mapping:
    """The mapping from ``spec`` (a file) and the options (None / empty: not given)."""
    # a spec's null: the key's default where that is a list or a mapping
    d = {k: v for k, v in read_spec(spec).items() if v is not None or not callable(KEYS[k].default_factory)}
    if options.get("closed_format") == "" or d.get("closed_format") == "":
        d["closed_format"] = None  # '' (empty): no closed query form; a non-empty option still wins
    if options.get("separator") is not None:  # '' (no separator) is a value here
        d["separator"] = options.pop("separator")
    if "separator" in d:
        d["separator"] = separator_value(d["separator"])
    for k, v in options.items():
        if v not in (None, (), [], ""):
            convert = KEYS[k].metadata["value"]
            d[k] = convert(v) if convert else v
    m = Mapping(**d)
    _check_mapping(m)
    return m


def separator_value(v: Any) -> str:
    """``--separator``'s value (a spec's ``separator:``) with its \\n and \\t escapes decoded."""
    if not isinstance(v, str):
        raise UserError(f"--separator {v!r}: expected text (\\n and \\t escapes allowed)")
    return v.replace("\\n", "\n").replace("\\t", "\t")


def _check_mapping(m: Mapping) -> None:
    """What the mapping itself must hold, before any row is read."""
    if m.shape not in SHAPES:
        raise UserError(f"--shape {m.shape}: expected one of {', '.join(SHAPES)}")
    if m.shape == "facts":
        for opt in ("relation", "entity", "answer"):
            if not getattr(m, opt):
                raise UserError(f"--{opt}: the column of each fact's {opt} is needed with --shape facts")
        return
    for opt in ("question", "gold"):
        if not getattr(m, opt):
            raise UserError(f"--{opt}: the column of each item's {opt} is needed with --shape contexts")
    layouts = [bool(m.contexts), bool(m.context_list), bool(m.context_text and not m.context_list)]
    if sum(layouts) != 1:
        raise UserError(
            "--context / --context-text / --context-list: give the passages in one layout: "
            "--context TYPE=TEXT_COLUMN[:ANSWER_COLUMN] (wide), --context-text COL --context-label COL "
            "(a row per passage) or --context-list COL --context-text KEY --context-label KEY (nested)"
        )
    if not m.contexts and not (m.context_text and m.context_label and m.labels):
        raise UserError(
            "--context-label / --label: passages in rows or lists need their label column and the "
            "labels the mapping knows (--label LABEL or --label LABEL=TYPE, repeatable)"
        )
    if m.answer_labels and len(set(m.answer_labels)) < 2:
        raise UserError(
            f"--answer-label {', '.join(m.answer_labels)}: an answer space needs at least two "
            "different labels"
        )
    if "{question}" not in m.query_format:
        raise UserError(f"--query-format {m.query_format!r}: has no {{question}} placeholder")
    if m.closed_format and not all(p in m.closed_format for p in ("{question}", "{answer}")):
        raise UserError(f"--closed-format {m.closed_format!r}: needs {{question}} and {{answer}}")


# -- the spec file -----------------------------------------------------------------------------------


def _refuse_nul(value: Any, field: str, what: str) -> None:
    """UserError when a text anywhere in ``value`` (a key or a value) holds a NUL byte: the same
    refusal the option gets on the command line (``options.Option``)."""
    if isinstance(value, str):
        if "\x00" in value:
            raise UserError(f"{what}: {field} holds a NUL byte (no text option can)")
    elif isinstance(value, dict):
        for k, v in value.items():
            _refuse_nul(k, field, what)
            _refuse_nul(v, f"{field}.{k}" if "\x00" not in str(k) else field, what)
    elif isinstance(value, (list, tuple)):
        for i, v in enumerate(value):
            _refuse_nul(v, f"{field}[{i}]", what)


def read_spec(path: str | None) -> dict[str, Any]:
    """The spec file's keys and values (those it gives), validated; {} without a file."""
    if not path:
        return {}
    p = Path(path)
    what = f"--spec {path}"
    if not p.is_file():
        raise UserError(f"{what}: no such file")
    check_input(p, "--spec")  # never the warehouse (a link of it): ctxprior/inputs.py
    try:
        text = read_input(p, "--spec").decode("utf-8")  # a regular file, never blocks
    except UnicodeDecodeError as e:
        raise UserError(f"{what}: not YAML or JSON ({e.reason})") from None
    raw = loads_yaml(text, what)
    if not isinstance(raw, dict):
        raise UserError(f"{what}: expected a mapping of option names to values")
    for k in raw:
        if not isinstance(k, str):
            raise UserError(f"{what}: key {k!r} must be a string (an option's name)")
    unknown = sorted(set(raw) - set(Spec.model_fields))
    if unknown:
        raise UserError(f"{what}: unknown key '{unknown[0]}'; known: {', '.join(sorted(Spec.model_fields))}")
    spec = validated(Spec, raw, what)
    out = spec.model_dump(exclude_unset=True)
    for key, value in out.items():
        _refuse_nul(value, key, what)
    if out.get("contexts"):
        out["contexts"] = [(c["type"], c["text"], c.get("answer")) for c in out["contexts"]]
    return out  # a relation's null templates: the mapping's (table._templates_of)
