"""The schema of ``ingest table --spec FILE`` (YAML or JSON): the mapping's keys with their types,
declared once as a pydantic model (strict: ``question: 5`` is refused, not read as ``"5"``).
``read_spec`` reads the file with ``inputs.loads_yaml`` (bounded: no aliases, depth, size, digits,
duplicated keys) and returns the validated values as plain data; every problem is one line naming
the field: ``--spec s.yaml: question must be a string (got 5)``."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict, StrictStr, field_validator, model_validator

from ..errors import UserError
from ..inputs import check_input, loads_yaml, read_input, validated

_STRICT = ConfigDict(extra="forbid", strict=True)
CONTEXT_FORM = "a mapping {type, text, answer} or TYPE=TEXT_COLUMN[:ANSWER_COLUMN]"


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


class Spec(BaseModel):
    """Every key a spec file may hold (the options of ``ingest table``, by their API names)."""

    model_config = _STRICT
    shape: StrictStr | None = None
    item: StrictStr | None = None
    question: StrictStr | None = None
    entity: StrictStr | None = None
    gold: StrictStr | None = None
    contexts: list[SpecContext] | None = None
    context_list: StrictStr | None = None
    context_text: StrictStr | None = None
    context_label: StrictStr | None = None
    context_answer: StrictStr | None = None
    context_type: StrictStr | None = None
    labels: dict[StrictStr, StrictStr] | None = None
    answer_labels: list[StrictStr] | None = None
    query_format: StrictStr | None = None
    closed_format: StrictStr | None = None
    separator: StrictStr | None = None
    relation: StrictStr | None = None
    answer: StrictStr | None = None
    query_templates: list[StrictStr] | None = None
    context_templates: dict[StrictStr, list[StrictStr]] | None = None
    relations: dict[StrictStr, SpecRelation] | None = None
    source_format: StrictStr | None = None
    description: StrictStr | None = None

    @field_validator("labels", mode="before")
    @classmethod
    def _labels(cls, v: Any) -> Any:
        """``[LABEL, LABEL=TYPE, ...]`` or ``{LABEL: TYPE}``."""
        if isinstance(v, list):
            if not all(isinstance(x, str) for x in v):
                raise ValueError("must be a list of LABEL or LABEL=TYPE strings, or a mapping LABEL: TYPE")
            return {x.partition("=")[0]: x.partition("=")[2] or x.partition("=")[0] for x in v}
        return v

    _lists = field_validator("context_templates", mode="before")(lambda cls, v: _template_lists(v))


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
    if "contexts" in out:
        out["contexts"] = [(c["type"], c["text"], c.get("answer")) for c in out["contexts"] or ()]
    if "relations" in out:
        out["relations"] = {
            r: {k: v for k, v in own.items() if v is not None} for r, own in (out["relations"] or {}).items()
        }
    return out
