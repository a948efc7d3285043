"""The schema of an exported folder's ``manifest.json`` (``export parquet``, ``publish``), declared
once as a pydantic model: what ``import parquet`` and ``pull`` read before they trust any of it.
Every value they use has a type and a range (``format_version``, ``schema_version`` and ``rows``
integers, each table entry an object with a name and kind, each file a path and a sha256), so a
tampered or careless manifest is one line naming the field:
``manifest.json: tables[0].files[0].sha256 is missing``. Keys a newer ctxprior adds are allowed."""

from __future__ import annotations

from typing import Annotated, Any, Literal

from pydantic import BaseModel, ConfigDict, Field, StrictInt, StrictStr

BIGINT_MAX = 2**63 - 1
Count = Annotated[StrictInt, Field(ge=0, le=BIGINT_MAX)]
Version = Annotated[StrictInt, Field(ge=0, le=10**6)]
_OPEN = ConfigDict(extra="allow", strict=True)


class ManifestFile(BaseModel):
    model_config = _OPEN
    path: Annotated[StrictStr, Field(min_length=1, max_length=4096)]
    sha256: Annotated[StrictStr, Field(pattern=r"^[0-9a-f]{64}$")]
    rows: Count | None = None
    bytes: Count | None = None


class ManifestColumn(BaseModel):
    model_config = _OPEN
    name: Annotated[StrictStr, Field(min_length=1)]
    type: Annotated[StrictStr, Field(min_length=1)]


class ManifestEntry(BaseModel):
    model_config = _OPEN
    name: Annotated[StrictStr, Field(min_length=1, max_length=255, pattern=r"^[^\x00-\x1f]+$")]
    kind: Literal["table", "view"]
    rows: Count
    columns: list[ManifestColumn] = []
    files: list[ManifestFile] = []


class Manifest(BaseModel):
    model_config = _OPEN
    format: StrictStr
    format_version: Version
    schema_version: Version | None = None
    meta: dict[StrictStr, Any] = {}
    tables: list[ManifestEntry]
