"""Publishing to (and pulling from) the Hugging Face Hub.

``build_dataset_dir`` writes exactly what ``publish`` uploads: ``README.md`` (the dataset card,
one config per table/view), ``manifest.json`` and ``data/<config>/*.parquet``.

``publish`` then: resolves the token (``--token-env`` variable, else ``HF_TOKEN``, else the
``hf auth login`` token via ``huggingface_hub.get_token``); ``create_repo(exist_ok=True)``; reads the
remote file list with sizes and hashes (``dataset_info(files_metadata=True)``); and when every
local file already has the same content remotely (LFS sha256, or git blob sha1 for small files)
and no stale data file is left, stops without a commit. Otherwise it makes one commit
(``create_commit``) adding the changed files and deleting data files that are no longer published.
The token is passed to ``HfApi`` only; messages that come back from the Hub are scrubbed of it.

The endpoint is ``$HF_ENDPOINT`` read at call time (default https://huggingface.co).
"""

from __future__ import annotations

import hashlib
import os
import re
import shutil
import tempfile
from collections.abc import Callable
from contextlib import AbstractContextManager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ..digest import sha256_file
from ..errors import UserError
from ..inputs import check_input
from ..outputs import write_inside
from ..storage.runs import default_runs
from ..storage.store import Store
from ..version import __version__
from .card import LICENSE_RE, build_card, missing_meanings
from .parquet import (
    MANIFEST,
    ROWS_PER_FILE,
    export_parquet,
    heavy_tables,
    import_parquet,
    read_manifest,
    select,
    staged_folder,
    table_files,
    views_reading,
    write_manifest,
)

REPO_RE = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.\-]*/[A-Za-z0-9][A-Za-z0-9_.\-]*$")
README = "README.md"


def check_repo_id(repo_id: str) -> str:
    if not REPO_RE.match(repo_id or "") or ".." in repo_id or repo_id.endswith((".git", ".")):
        raise UserError(f"{repo_id}: not a Hub dataset id; pass OWNER/NAME, e.g. my-lab/ctxprior-pythia")
    return repo_id


def resolve_token(token_env: str | None = None) -> str | None:
    """--token-env VAR, else $HF_TOKEN, else the token saved by `hf auth login`."""
    if token_env:
        value = os.environ.get(token_env)
        if not value:
            raise UserError(
                f"--token-env {token_env}: environment variable {token_env} is not set or "
                "empty; export it with your Hugging Face write token"
            )
        return value.strip()
    if os.environ.get("HF_TOKEN"):
        return os.environ["HF_TOKEN"].strip()
    from huggingface_hub import get_token

    return get_token()


def _endpoint() -> str | None:
    e = os.environ.get("HF_ENDPOINT")
    return e.rstrip("/") if e else None


class _Scrub:
    """Removes the token from any text that may reach the user."""

    def __init__(self, token: str | None):
        self.token = token

    def __call__(self, text: Any) -> str:
        s = str(text)
        if self.token:
            s = s.replace(self.token, "***")
        return s


def _hub_error(action: str, e: BaseException, scrub: _Scrub) -> UserError:
    status = getattr(getattr(e, "response", None), "status_code", None)
    first = scrub(e).strip().splitlines()[0] if str(e).strip() else type(e).__name__
    hints: dict[int | None, str] = {
        401: "the token was rejected; check it has write access (HF_TOKEN / --token-env / `hf auth login`)",
        403: "the token may not write to this namespace; check the owner and the token's permissions",
        404: "the repository was not found; check OWNER/NAME and that the token can see it",
    }
    hint = hints.get(status, "check the network, HF_ENDPOINT and the token, then run the command again")
    return UserError(f"{action}: {first}; {hint}")


# -- building the folder ------------------------------------------------------------------------


def read_citation(citation: str | None) -> str | None:
    """--citation TEXT, or the path of a file holding it (e.g. a .bib file)."""
    if citation and "\n" not in citation and len(citation) < 4096:
        p = Path(citation).expanduser()
        try:
            is_file = p.is_file()
        except (OSError, ValueError):
            is_file = False
        if is_file:
            check_input(p, "--citation")  # never the warehouse (a link of it): ctxprior/inputs.py
            try:
                return p.read_text(encoding="utf-8")
            except (OSError, UnicodeDecodeError) as e:
                raise UserError(f"--citation {citation}: cannot read it as UTF-8 text ({e})") from None
    return citation


def build_dataset_dir(
    store: Store,
    out_dir: str | os.PathLike,
    repo_id: str,
    *,
    runs: list[int] | None = None,
    include_distributions: bool = False,
    license: str | None = None,
    citation: str | None = None,
    overwrite: bool = False,
    rows_per_file: int = ROWS_PER_FILE,
) -> dict[str, Any]:
    """Write README.md + manifest.json + data/ for ``repo_id`` into ``out_dir``; return the manifest.

    Tables and readable views are all published (one config each), except empty ones (the
    `datasets` library cannot load a config without rows) and, unless ``include_distributions``,
    the heavy distribution tables and views reading them. ``runs`` None = every finished run.
    """
    check_repo_id(repo_id)
    if license is not None and not LICENSE_RE.match(license):
        raise UserError(
            f"--license {license}: not a license identifier; use a Hub license id such "
            "as cc-by-4.0, mit, apache-2.0, other"
        )
    citation = read_citation(citation)
    run_ids = default_runs(store) if runs is None else runs
    sel = select(store, all_views=True, runs=run_ids, include_heavy=include_distributions)
    left_out = []
    if not include_distributions:
        heavy = [t for t in sorted(heavy_tables()) if t in store.table_names()]
        left_out = heavy + sorted(views_reading(store, heavy))
    manifest = export_parquet(
        store,
        out_dir,
        sel,
        skip_empty=True,
        stamp_time=False,
        overwrite=overwrite,
        rows_per_file=rows_per_file,
        extra={"include_distributions": include_distributions, "left_out": left_out},
        extra_files=(README,),
    )
    manifest.setdefault("left_out", left_out)
    out = Path(out_dir)
    with write_inside(out, README) as tmp:  # recorded in the manifest by export_parquet
        Path(tmp).write_text(
            build_card(store, manifest, repo_id, license=license, citation=citation), encoding="utf-8"
        )
    write_manifest(out, manifest)
    return manifest


def local_files(folder: str | os.PathLike) -> dict[str, Path]:
    folder = Path(folder)
    return {p.relative_to(folder).as_posix(): p for p in sorted(folder.rglob("*")) if p.is_file()}


def _git_blob_sha1(path: Path) -> str:
    data = path.read_bytes()
    h = hashlib.sha1(b"blob %d\0" % len(data))
    h.update(data)
    return h.hexdigest()


def _same_remote(path: Path, sibling: Any) -> bool:
    lfs = getattr(sibling, "lfs", None)
    if lfs is not None:
        sha = lfs.get("sha256") if isinstance(lfs, dict) else getattr(lfs, "sha256", None)
        return sha == sha256_file(path)
    blob = getattr(sibling, "blob_id", None)
    return blob is not None and blob == _git_blob_sha1(path)


# -- publish ------------------------------------------------------------------------------------


@dataclass
class PublishResult:
    repo_id: str
    url: str
    committed: bool
    commit: str | None
    uploaded: list[str] = field(default_factory=list)
    deleted: list[str] = field(default_factory=list)
    manifest: dict[str, Any] = field(default_factory=dict)
    missing_meanings: list[str] = field(default_factory=list)


def commit_message(manifest: dict[str, Any], message: str | None) -> tuple[str, str]:
    runs = manifest.get("runs") or []
    run_txt = ", ".join(map(str, runs)) if runs else "none"
    auto = f"ctxprior {__version__}: publish warehouse (schema v{manifest.get('schema_version')}), runs {run_txt}"
    desc = f"Published with ctxprior {__version__}.\n\nRuns: {run_txt}\n\n" + "\n".join(
        f"- {e['name']}: {e['rows']} rows" for e in manifest["tables"] if e["files"]
    )
    if message:
        return message, auto + "\n\n" + desc
    return auto, desc


def publish(
    store: Store,
    repo_id: str,
    *,
    private: bool = False,
    runs: list[int] | None = None,
    include_distributions: bool = False,
    token_env: str | None = None,
    license: str | None = None,
    citation: str | None = None,
    message: str | None = None,
    echo: Callable[[str], None] = lambda s: None,
    rows_per_file: int = ROWS_PER_FILE,
) -> PublishResult:
    """Build the dataset folder in a temporary directory and upload it in one commit (or none)."""
    check_repo_id(repo_id)
    token = resolve_token(token_env)
    if not token:
        raise UserError(
            "no Hugging Face token: set HF_TOKEN, pass --token-env VAR, or run "
            "`hf auth login` (or use --dry-run DIR to only write the files)"
        )
    scrub = _Scrub(token)
    from huggingface_hub import CommitOperationAdd, CommitOperationDelete, HfApi

    stage = Path(tempfile.mkdtemp(prefix="ctxprior-publish-"))
    try:
        manifest = build_dataset_dir(
            store,
            stage / "repo",
            repo_id,
            runs=runs,
            include_distributions=include_distributions,
            license=license,
            citation=citation,
            rows_per_file=rows_per_file,
        )
        files = local_files(stage / "repo")
        api = HfApi(endpoint=_endpoint(), token=token)
        repo_url, remote, head = _remote_state(api, repo_id, private, scrub)

        changed = [p for p, f in files.items() if p not in remote or not _same_remote(f, remote[p])]
        stale = [p for p in remote if p.startswith("data/") and p not in files]
        url = str(repo_url)
        if not changed and not stale:
            echo(f"{repo_id} is unchanged ({len(files)} files already on the Hub at {head}); no commit made")
            return PublishResult(repo_id, url, False, head, [], [], manifest, missing_meanings(manifest))

        size = sum(files[p].stat().st_size for p in changed)
        echo(
            f"uploading {len(changed)} file(s), {size / 1e6:.1f} MB"
            + (f", deleting {len(stale)} stale file(s)" if stale else "")
            + f" to {repo_id}"
        )
        ops: list[Any] = [CommitOperationAdd(path_in_repo=p, path_or_fileobj=str(files[p])) for p in changed]
        ops += [CommitOperationDelete(path_in_repo=p) for p in stale]
        summary, desc = commit_message(manifest, message)
        try:
            info = api.create_commit(
                repo_id,
                ops,
                commit_message=summary,
                commit_description=desc,
                repo_type="dataset",
                parent_commit=head,
            )
        except Exception as e:
            raise _hub_error(f"publish {repo_id}: commit failed", e, scrub) from None
        echo(f"committed {info.oid}: {scrub(info.commit_url)}")
        return PublishResult(
            repo_id, url, True, info.oid, changed, stale, manifest, missing_meanings(manifest)
        )
    finally:
        shutil.rmtree(stage, ignore_errors=True)


def _remote_state(api: Any, repo_id: str, private: bool, scrub: _Scrub) -> tuple[Any, dict, Any]:
    """Create the dataset repo if needed; (its url, {path: remote file}, head commit or None)."""
    from huggingface_hub.errors import RepositoryNotFoundError

    try:
        repo_url = api.create_repo(repo_id, repo_type="dataset", private=private, exist_ok=True)
        try:
            info = api.dataset_info(repo_id, files_metadata=True)
            return repo_url, {s.rfilename: s for s in (info.siblings or [])}, info.sha
        except RepositoryNotFoundError:
            return repo_url, {}, None
    except Exception as e:  # HfHubHTTPError, httpx transport errors, ...: one scrubbed line
        raise _hub_error(f"publish {repo_id}", e, scrub) from None


# -- pull ---------------------------------------------------------------------------------------


def fetch_dataset(repo_id: str, *, revision: str | None = None, token_env: str | None = None) -> Path:
    """Download manifest.json and the table files of a published dataset; return the local folder."""
    check_repo_id(repo_id)
    token = resolve_token(token_env) if token_env else None  # public repos need none; else get_token()
    scrub = _Scrub(token or resolve_token(None))
    from huggingface_hub import hf_hub_download, snapshot_download

    kw: dict[str, Any] = {
        "repo_id": repo_id,
        "repo_type": "dataset",
        "revision": revision,
        "token": token if token else None,
    }
    if _endpoint():
        kw["endpoint"] = _endpoint()
    try:
        mpath = hf_hub_download(filename=MANIFEST, **kw)
        m = read_manifest(Path(mpath).parent)
        wanted = [MANIFEST] + [
            f["path"] for e in m["tables"] if e.get("kind") == "table" for f in e.get("files", [])
        ]
        return Path(snapshot_download(allow_patterns=wanted, **kw))
    except UserError:
        raise
    except Exception as e:
        raise _hub_error(f"pull {repo_id}", e, scrub) from None


def resolve_source(source: str, *, revision: str | None = None, token_env: str | None = None) -> Path:
    """A local dataset folder as is; OWNER/NAME downloaded from the Hub. Checks the manifest."""
    p = Path(source)
    if p.is_dir():
        folder = p
    elif p.exists():
        raise UserError(f"{source}: is a file; pass a dataset folder or a Hub id OWNER/NAME")
    elif REPO_RE.match(source) and not source.startswith((".", "/")):
        folder = fetch_dataset(source, revision=revision, token_env=token_env)
    else:
        raise UserError(f"{source}: no such folder and not a Hub dataset id (OWNER/NAME)")
    read_manifest(folder)
    return folder


def pull(
    open_wh: Callable[[list[Path]], AbstractContextManager[Store]],
    source: str,
    *,
    mode: str = "fail",
    revision: str | None = None,
    token_env: str | None = None,
) -> tuple[Path, dict[str, int]]:
    """Load a published ctxprior dataset (a local folder, or OWNER/NAME on the Hub) into the
    warehouse that ``open_wh(files)`` opens (reading the folder's table files): only once the source is found and every file's sha256
    checked, so a bad source leaves the warehouse untouched (and uncreated)."""
    folder = resolve_source(source, revision=revision, token_env=token_env)  # before touching the warehouse
    # a private copy of the checked bytes is what the import reads
    with (
        staged_folder(folder, strict=True) as (stage, manifest),
        open_wh(table_files(stage, manifest)) as store,
    ):
        return folder, import_parquet(store, stage, mode=mode, verify=False)
