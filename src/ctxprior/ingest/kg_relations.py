"""The relations file of `ctxprior build-dataset` (YAML), validated fully before any triple is read.

Format (documented with an example in docs/datasets.md; a bundled example is
``ctxprior/ingest/data/kg_relations.yaml``)::

    description: optional free text for the dataset row
    prefixes: {ex: "http://example.org/"}      # optional, for the names below
    relations:
      - predicate: yago:capital                # IRI, <IRI> or prefixed name (required)
        reverse: false                         # true: the entity is the triple's object
        name: capital                          # short name (default: the predicate's local name)
        subject_class: schema:Country          # optional rdf:type filter(s) on the triple's subject
        object_class: [schema:City]            # ... and on its object
        query_forms:
          open: ["Q: What is the capital of {entity}?\\nA:", ...]          # {entity}, no {answer}
          closed: ["Q: Is {answer} the capital of {entity}?\\nA:", ...]    # {entity} and {answer}
        context_templates:                     # {entity} and {answer}; base is required
          base: "The capital of {entity} is {answer}.\\n"
          assertive: "Definitely, the capital of {entity} is {answer}.\\n"
          negation: "The capital of {entity} is not {answer}.\\n"
"""

from __future__ import annotations

import difflib
import hashlib
import string
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ..covariates.triples import DEFAULT_PREFIXES
from ..errors import UserError
from ..inputs import bounded, check_input, read_input
from .builder import short_relation_name

TOP_KEYS = ("description", "prefixes", "relations")
RELATION_KEYS = (
    "predicate",
    "reverse",
    "name",
    "subject_class",
    "object_class",
    "query_forms",
    "context_templates",
)
QUERY_TYPES = ("open", "closed")
CONTEXT_TYPES = ("base", "assertive", "negation", "super_assertive", "ignore_prior", "believe_me")
PLACEHOLDERS = {"open": ("entity",), "closed": ("entity", "answer"), "context": ("entity", "answer")}


@dataclass
class RelationSpec:
    """One relation to build: the warehouse relation id is ``[reverse-]<predicate IRI>``."""

    predicate: str
    reverse: bool
    short_name: str
    subject_classes: list[str] = field(default_factory=list)
    object_classes: list[str] = field(default_factory=list)
    query_forms: list[tuple[str, int, str]] = field(default_factory=list)  # (open|closed, ordinal, template)
    context_templates: list[tuple[str, int, str]] = field(default_factory=list)  # (type, ordinal, template)

    @property
    def relation_id(self) -> str:
        return ("reverse-" if self.reverse else "") + self.predicate


@dataclass
class RelationsFile:
    path: str  # absolute (provenance)
    given: str  # as the user wrote it (messages)
    sha256: str
    text: str
    description: str | None
    relations: list[RelationSpec]


class _UniqueKeyLoader:
    """A yaml SafeLoader that refuses duplicate keys in a mapping (PyYAML keeps the last silently),
    and, as every YAML input, anchors, aliases, deep nesting and long integers
    (``inputs.bounded_yaml_loader``; ``read_relations`` bounds what aliases expand to)."""

    @staticmethod
    def make():
        import yaml

        from ..inputs import bounded_yaml_loader

        class Loader(bounded_yaml_loader()):
            pass

        def mapping(loader, node, deep=False):
            keys = set()
            for k, _ in node.value:
                key = loader.construct_object(k, deep=deep)
                if key in keys:
                    raise yaml.constructor.ConstructorError(
                        None, None, f"duplicate key {key!r}", k.start_mark
                    )
                keys.add(key)
            return loader.construct_mapping(node, deep)

        Loader.add_constructor(yaml.resolver.BaseResolver.DEFAULT_MAPPING_TAG, mapping)
        return Loader


class _Check:
    """Validation helpers naming the file and the path of the problem (relations[2].query_forms)."""

    def __init__(self, path: str):
        self.path = path

    def fail(self, where: str, problem: str):
        raise UserError(f"{self.path}: {where}: {problem}")

    def keys(self, d: Any, where: str, allowed: tuple[str, ...], required: tuple[str, ...] = ()) -> dict:
        if not isinstance(d, dict):
            self.fail(where, f"expected a mapping, got {_kind(d)}")
        for k in d:
            if k not in allowed:
                near = difflib.get_close_matches(str(k), allowed, n=1, cutoff=0.6)
                hint = f"did you mean '{near[0]}'?" if near else f"allowed: {', '.join(allowed)}"
                self.fail(where, f"unknown key '{k}'; {hint}")
        for k in required:
            if k not in d:
                self.fail(where, f"missing key '{k}'")
        return d

    def strings(self, v: Any, where: str) -> list[str]:
        """A string or a non-empty list of strings."""
        items = [v] if isinstance(v, str) else v
        if not isinstance(items, list) or not items:
            self.fail(where, f"expected a string or a non-empty list of strings, got {_kind(v)}")
        for i, x in enumerate(items):
            if not isinstance(x, str) or not x.strip():
                self.fail(
                    f"{where}[{i}]" if isinstance(v, list) else where,
                    f"expected a non-empty string, got {_kind(x)}",
                )
        return items

    def template(self, t: str, where: str, kind: str) -> str:
        need = PLACEHOLDERS[kind]
        try:
            fields = [(f, conv, spec) for _, f, spec, conv in string.Formatter().parse(t) if f is not None]
        except ValueError as e:
            self.fail(
                where, f"template {t!r} has a broken placeholder ({e}); write a literal brace as {{{{ or }}}}"
            )
        for f, conv, spec in fields:
            if f not in need:
                allowed = " and ".join("{" + n + "}" for n in need)
                self.fail(where, f"template {t!r} uses {{{f}}}; {kind} templates may only use {allowed}")
            if conv or spec:
                self.fail(where, f"template {t!r}: write plain {{{f}}} without a conversion or format spec")
        for n in need:
            if n not in {f for f, _, _ in fields}:
                self.fail(where, f"template {t!r} has no {{{n}}} placeholder")
        return t


def _kind(v: Any) -> str:
    return "nothing" if v is None else type(v).__name__


def _iri(chk: _Check, v: Any, where: str, prefixes: dict[str, str]) -> str:
    if not isinstance(v, str) or not v.strip():
        chk.fail(where, f"expected an IRI or a prefixed name, got {_kind(v)}")
    v = v.strip()
    if v.startswith("<") and v.endswith(">"):
        return v[1:-1]
    if "://" in v or v.startswith("urn:"):
        return v
    pfx, sep, local = v.partition(":")
    if not sep:
        chk.fail(where, f"'{v}' is neither an IRI nor a prefixed name (e.g. yago:capital)")
    if pfx not in prefixes:
        chk.fail(
            where, f"unknown prefix '{pfx}:' in '{v}'; declare it under 'prefixes:' or write the full IRI"
        )
    return prefixes[pfx] + local


def read_relations(path: str | Path) -> RelationsFile:
    """Read and validate the relations file; any problem is a one-line UserError naming its place."""
    import yaml

    path = str(path)
    p = Path(path)
    if not p.is_file():
        raise UserError(f"{path}: no such relations file" if not p.exists() else f"{path}: is not a file")
    check_input(p)  # never the warehouse (a link of it): ctxprior/inputs.py
    raw = read_input(p)  # a regular file, never blocks
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as e:
        raise UserError(f"{path}: not UTF-8 text (byte 0x{raw[e.start]:02x} at offset {e.start})") from None
    try:
        data = yaml.load(text, Loader=_UniqueKeyLoader.make())
    except yaml.YAMLError as e:
        mark = getattr(e, "problem_mark", None) or getattr(e, "context_mark", None)
        where = f"line {mark.line + 1} column {mark.column + 1}: " if mark else ""
        problem = getattr(e, "problem", None) or str(e).splitlines()[0]
        raise UserError(f"{path}: not valid YAML: {where}{problem}") from None
    except (ValueError, RecursionError) as e:  # inputs' bounds: too deep, too many digits
        raise UserError(f"{path}: not valid YAML: {str(e).splitlines()[0]}") from None
    data = bounded(data, path)
    chk = _Check(path)
    if data is None:
        chk.fail("file", "is empty; it needs a 'relations:' list")
    top = chk.keys(data, "top level", TOP_KEYS, required=("relations",))
    prefixes = dict(DEFAULT_PREFIXES)
    declared = top.get("prefixes") or {}
    if not isinstance(declared, dict):
        chk.fail("prefixes", f"expected a mapping of prefix: IRI, got {_kind(declared)}")
    for k, v in declared.items():
        if not isinstance(v, str) or ("://" not in v and not v.startswith("urn:")):
            chk.fail(f"prefixes.{k}", f"expected an IRI such as http://example.org/, got {v!r}")
        prefixes[str(k)] = v
    desc = top.get("description")
    if desc is not None and not isinstance(desc, str):
        chk.fail("description", f"expected a string, got {_kind(desc)}")
    rels = top["relations"]
    if not isinstance(rels, list) or not rels:
        chk.fail("relations", f"expected a non-empty list of relations, got {_kind(rels)}")
    specs = [_relation(chk, r, f"relations[{i}]", prefixes) for i, r in enumerate(rels)]
    _check_unique(chk, specs)
    return RelationsFile(
        path=str(p.resolve()),
        given=path,
        sha256=hashlib.sha256(raw).hexdigest(),
        text=text,
        description=desc,
        relations=specs,
    )


def _relation(chk: _Check, r: Any, where: str, prefixes: dict[str, str]) -> RelationSpec:
    r = chk.keys(r, where, RELATION_KEYS, required=("predicate", "query_forms", "context_templates"))
    pred = r["predicate"]
    rev_prefix = isinstance(pred, str) and pred.startswith("reverse-")
    predicate = _iri(chk, pred[len("reverse-") :] if rev_prefix else pred, f"{where}.predicate", prefixes)
    reverse = r.get("reverse", False)
    if not isinstance(reverse, bool):
        chk.fail(f"{where}.reverse", f"expected true or false, got {reverse!r}")
    if rev_prefix and "reverse" in r and not reverse:
        chk.fail(f"{where}.reverse", "is false but the predicate starts with 'reverse-'; keep one of them")
    reverse = reverse or rev_prefix
    where = f"{where} ({pred})"
    name = r.get("name")
    if name is None:
        name = short_relation_name(("reverse-" if reverse else "") + predicate)
    elif not isinstance(name, str) or not name.strip() or any(c.isspace() for c in name):
        chk.fail(f"{where}.name", f"expected a short name without spaces, got {name!r}")
    spec = RelationSpec(predicate=predicate, reverse=reverse, short_name=name)
    for key, dest in (("subject_class", spec.subject_classes), ("object_class", spec.object_classes)):
        if r.get(key) is not None:
            for c in chk.strings(r[key], f"{where}.{key}"):
                dest.append(_iri(chk, c, f"{where}.{key}", prefixes))
    qf = chk.keys(r["query_forms"], f"{where}.query_forms", QUERY_TYPES, required=QUERY_TYPES)
    for qtype in QUERY_TYPES:
        place = f"{where}.query_forms.{qtype}"
        for i, t in enumerate(chk.strings(qf[qtype], place)):
            spec.query_forms.append((qtype, i, chk.template(t, _item(place, qf[qtype], i), qtype)))
    ct = chk.keys(r["context_templates"], f"{where}.context_templates", CONTEXT_TYPES, required=("base",))
    for ctype in CONTEXT_TYPES:
        if ctype in ct:
            place = f"{where}.context_templates.{ctype}"
            for i, t in enumerate(chk.strings(ct[ctype], place)):
                spec.context_templates.append(
                    (ctype, i, chk.template(t, _item(place, ct[ctype], i), "context"))
                )
    return spec


def _item(place: str, value: Any, i: int) -> str:
    """'x.base' for a single template, 'x.base[1]' for an item of a list."""
    return f"{place}[{i}]" if isinstance(value, list) else place


def _check_unique(chk: _Check, specs: list[RelationSpec]) -> None:
    seen: dict[str, int] = {}
    names: dict[str, int] = {}
    for i, s in enumerate(specs):
        if s.relation_id in seen:
            chk.fail(
                f"relations[{i}]",
                f"relation {s.relation_id} is listed twice (also relations[{seen[s.relation_id]}])",
            )
        if s.short_name in names:
            chk.fail(
                f"relations[{i}].name",
                f"name '{s.short_name}' is used twice (also relations[{names[s.short_name]}]); "
                "set a distinct 'name:'",
            )
        seen[s.relation_id] = i
        names[s.short_name] = i
