"""Where an ingest's input comes from: a local path, a Hugging Face Hub dataset file or a URL.

``resolve_file(spec, sha256=None)`` accepts

- a local path (read in place);
- ``hf://datasets/OWNER/REPO[@REV]/PATH``: one file of a Hub dataset repository, downloaded with
  ``huggingface_hub.hf_hub_download`` into the hub cache (``$HF_HUB_CACHE``, default
  ``$HF_HOME/hub``); the commit it resolved to is recorded (``hf://datasets/OWNER/REPO@<sha>/PATH``);
- an ``http://`` / ``https://`` URL: downloaded once into the Hugging Face assets cache
  (``$HF_ASSETS_CACHE``, default ``$HF_HOME/assets``) under ``ctxprior/urls/<hash of the URL>/``,
  reused from there afterwards. A download is cached only whole: it streams into a ``.part``
  file, the bytes received are checked against ``Content-Length`` (a chunked answer must end
  properly), and a short or broken transfer is retried (``URL_ATTEMPTS`` times, backing off)
  and never moved into place. A cached file that turns out unreadable is removed by its reader
  (``discard_download``), so the next run downloads it again.

Every download shows a tqdm progress bar on stderr. The file's sha256 is computed and returned
(it goes into ``dataset.source_sha256``); with ``sha256=HEX`` a different file is refused.
Offline (``HF_HUB_OFFLINE=1``, no network, connection refused) a file that is not in the cache is
a one-line ``UserError`` that says what to download and where to put it. The environment
(``HF_HOME``, ``HF_ENDPOINT``, ``HF_HUB_OFFLINE``, ...) is read at call time.
"""

from __future__ import annotations

import hashlib
import http.client
import os
import re
import time
import urllib.error
import urllib.request
from dataclasses import dataclass
from pathlib import Path
from urllib.parse import quote, unquote, urlsplit

from ..digest import sha256_file
from ..errors import UserError

HF_PATH_RE = re.compile(r"^hf://datasets/(?P<repo>[^/@]+/[^/@]+)(?:@(?P<rev>[^/]+))?/(?P<path>[^@]+)$")
SHA256_RE = re.compile(r"^[0-9a-f]{64}$")
DEFAULT_ENDPOINT = "https://huggingface.co"
URL_ATTEMPTS = 3  # tries per URL download; backoff URL_BACKOFF * 2**k seconds in between
URL_BACKOFF = 1.0


@dataclass(frozen=True)
class Source:
    """A file ready to read: where it is, where it came from (recorded as provenance), its sha256."""

    path: Path
    origin: str
    sha256: str | None  # None when a local path does not exist (the reader then says so)


# -- the Hugging Face environment, read at call time ----------------------------------------------


def _truthy(name: str) -> bool:
    return os.environ.get(name, "").strip().upper() in {"1", "ON", "YES", "TRUE"}


def is_offline() -> bool:
    """``HF_HUB_OFFLINE`` set now, or when huggingface_hub was imported."""
    if _truthy("HF_HUB_OFFLINE"):
        return True
    from huggingface_hub import constants

    return bool(constants.HF_HUB_OFFLINE)


def hf_home() -> Path:
    default = Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache") / "huggingface"
    return Path(os.environ.get("HF_HOME") or default).expanduser()


def hub_cache_dir() -> Path:
    env = os.environ.get("HF_HUB_CACHE") or os.environ.get("HUGGINGFACE_HUB_CACHE")
    return Path(env).expanduser() if env else hf_home() / "hub"


def assets_cache_dir() -> Path:
    env = os.environ.get("HF_ASSETS_CACHE")
    return Path(env).expanduser() if env else hf_home() / "assets"


def endpoint() -> str:
    return (os.environ.get("HF_ENDPOINT") or DEFAULT_ENDPOINT).rstrip("/")


# -- checks -----------------------------------------------------------------------------------------


def check_sha256(value: str | None) -> str | None:
    """``--sha256 HEX``: 64 hex digits (case-insensitive); returned lower-case."""
    if value is None:
        return None
    v = value.strip().lower()
    if not SHA256_RE.match(v):
        raise UserError(f"--sha256 {value}: expected 64 hexadecimal digits (the output of `sha256sum FILE`)")
    return v


def verify_sha256(path: Path, expected: str | None, what: str) -> str:
    """The file's sha256; a UserError when ``expected`` is given and differs."""
    actual = sha256_file(path)
    if expected is not None and actual != expected:
        raise UserError(
            f"{what}: sha256 is {actual} but --sha256 expects {expected}; the file is not the "
            "one you expect (a new release or a broken download); check the source or the hash"
        )
    return actual


# -- Hub files --------------------------------------------------------------------------------------


def parse_hf_path(spec: str) -> tuple[str, str | None, str]:
    """``hf://datasets/OWNER/REPO[@REV]/PATH`` -> (OWNER/REPO, REV or None, PATH)."""
    m = HF_PATH_RE.match(spec)
    if not m or ".." in m.group("path").split("/"):
        raise UserError(
            f"{spec}: not a Hub file path; expected hf://datasets/OWNER/REPO[@REVISION]/PATH, "
            "e.g. hf://datasets/my-lab/yago-qec@main/yago_qec.json"
        )
    return m.group("repo"), unquote(m.group("rev")) if m.group("rev") else None, m.group("path")


def hub_url(repo_id: str, filename: str, revision: str | None) -> str:
    return f"{endpoint()}/datasets/{repo_id}/resolve/{quote(revision or 'main', safe='')}/{filename}"


def hub_file(
    repo_id: str, filename: str, revision: str | None, *, todo: str | None = None
) -> tuple[Path, str]:
    """Download (or find in the hub cache) one file of a Hub dataset repo: (local path, commit sha).

    ``todo`` ends the message when the file cannot be had: what to download by hand and where to
    put it (default: download the file's URL and pass the local path instead).
    """
    from huggingface_hub import hf_hub_download

    offline, cache = is_offline(), str(hub_cache_dir())
    host = endpoint() if os.environ.get("HF_ENDPOINT") else None  # None: the library's default
    down = None if offline else unreachable(endpoint())
    try:  # no retries against a host that is not there (down): a cached copy, else the message
        got = hf_hub_download(
            repo_id,
            filename,
            repo_type="dataset",
            revision=revision,
            cache_dir=cache,
            local_files_only=offline or bool(down),
            endpoint=host,
        )
        local = Path(got)
    except Exception as e:  # huggingface_hub raises several types; each becomes one line
        todo = todo or f"download {hub_url(repo_id, filename, revision)} and pass the local path instead"
        raise hub_error(repo_id, filename, revision, e, todo, down) from None
    commit = local.parts[-len(Path(filename).parts) - 1]
    return local, commit


def unreachable(url: str) -> str | None:
    """Why ``url``'s host cannot be connected to (DNS, refused, timeout), or None when it can or
    when a proxy is configured for it (then only the real request can tell)."""
    import socket
    import urllib.request as ur

    u = urlsplit(url)
    host, port = u.hostname or "", u.port or (443 if u.scheme == "https" else 80)
    if ur.getproxies().get(u.scheme) and not ur.proxy_bypass(host):
        return None
    try:
        socket.create_connection((host, port), timeout=5).close()
        return None
    except OSError as e:
        return getattr(e, "strerror", None) or str(e) or type(e).__name__


def hub_error(
    repo_id: str, filename: str, revision: str | None, e: BaseException, todo: str, down: str | None = None
) -> UserError:
    """A huggingface_hub exception as one actionable line."""
    from huggingface_hub import errors

    where = f"hf://datasets/{repo_id}{'@' + revision if revision else ''}/{filename}"
    if isinstance(e, (errors.LocalEntryNotFoundError, ConnectionError, TimeoutError)):
        why = (
            "HF_HUB_OFFLINE is set"
            if is_offline()
            else f"{endpoint()} cannot be reached" + (f" ({down})" if down else "")
        )
        return UserError(f"{where}: not in the Hugging Face cache ({hub_cache_dir()}) and {why}; {todo}")
    if isinstance(e, errors.GatedRepoError):
        return UserError(
            f"{where}: the dataset is gated; accept its terms on the Hub and log in (`hf auth login`)"
        )
    if isinstance(e, errors.RepositoryNotFoundError):
        return UserError(
            f"{where}: no dataset repository {repo_id} on {endpoint()} (or it is private: "
            "`hf auth login`); check OWNER/REPO"
        )
    if isinstance(e, errors.RevisionNotFoundError):
        return UserError(
            f"{where}: {repo_id} has no revision {revision!r}; pass a branch, tag or commit that exists"
        )
    if isinstance(e, errors.EntryNotFoundError):
        return UserError(
            f"{where}: {repo_id} has no file {filename} at revision {revision or 'main'}; "
            "check the path (the repository's 'Files' tab lists them)"
        )
    first = (str(e).strip().splitlines() or [type(e).__name__])[0]
    return UserError(f"{where}: download failed ({first}); check the network and HF_ENDPOINT, or {todo}")


# -- URLs -------------------------------------------------------------------------------------------


def url_cache_path(url: str) -> Path:
    """Where a URL's download lives: <assets cache>/ctxprior/urls/<sha1(url)[:16]>/<file name>."""
    name = unquote(urlsplit(url).path.rsplit("/", 1)[-1]) or "download"
    name = re.sub(r"[^\w.\-]", "_", name)
    key = hashlib.sha1(url.encode("utf-8")).hexdigest()[:16]
    return assets_cache_dir() / "ctxprior" / "urls" / key / name


class _Short(Exception):
    """A transfer that ended before its Content-Length."""


def _stream(url: str, part: Path, desc: str) -> None:
    """One attempt: ``url`` into ``part``; _Short when fewer bytes came than announced."""
    from tqdm.auto import tqdm

    req = urllib.request.Request(url, headers={"User-Agent": "ctxprior", "Accept-Encoding": "identity"})
    with urllib.request.urlopen(req, timeout=30) as r, open(part, "wb") as f:
        total = int(r.headers.get("Content-Length") or 0) or None
        got = 0
        with tqdm(total=total, unit="B", unit_scale=True, unit_divisor=1024, desc=desc, disable=None) as bar:
            for chunk in iter(lambda: r.read(1 << 20), b""):
                f.write(chunk)
                got += len(chunk)
                bar.update(len(chunk))
    if total is not None and got != total:
        raise _Short(f"{got} of {total} bytes")


def _fetch(url: str, dest: Path) -> None:
    """Download ``url`` whole into ``dest`` (via ``dest.part``), retrying short or broken
    transfers; ``dest`` is only ever a complete file. Errors -> one line."""
    dest.parent.mkdir(parents=True, exist_ok=True)
    part = dest.with_name(dest.name + ".part")
    instead = "download it yourself (browser, curl) and pass the local path instead"
    for attempt in range(URL_ATTEMPTS):
        try:
            _stream(url, part, dest.name)
            os.replace(part, dest)
            return
        except urllib.error.HTTPError as e:
            part.unlink(missing_ok=True)
            if (e.code != 429 and e.code < 500) or attempt == URL_ATTEMPTS - 1:
                raise UserError(f"{url}: HTTP {e.code} {e.reason}; check the URL") from None
        except urllib.error.URLError as e:  # no connection at all (refused, DNS): no retry
            part.unlink(missing_ok=True)
            raise UserError(f"{url}: cannot download ({e.reason}); {instead}") from None
        except (_Short, http.client.HTTPException, OSError) as e:  # cut short, reset, timed out
            part.unlink(missing_ok=True)
            if attempt == URL_ATTEMPTS - 1:
                why = str(e) or type(e).__name__
                raise UserError(
                    f"{url}: the download broke off ({why}) in each of {URL_ATTEMPTS} attempts, "
                    f"so nothing was cached; try again later, or {instead}"
                ) from None
        time.sleep(URL_BACKOFF * 2**attempt)


def discard_download(spec: str) -> str | None:
    """Remove the cached download of URL ``spec`` (its reader found it broken); a sentence that
    says so and how to recover, or None when ``spec`` is not a URL."""
    if not str(spec).startswith(("http://", "https://")):
        return None
    url_cache_path(str(spec)).unlink(missing_ok=True)
    return (
        "the cached download was removed, so the next run downloads it again; if the file at the "
        "URL itself is broken, fix it there or pass a local copy (--sha256 HEX pins the expected file)"
    )


def url_file(url: str, expected: str | None = None) -> Path:
    """The cached download of ``url``; fetched when absent, or when it does not match ``expected``."""
    dest = url_cache_path(url)
    if dest.is_file() and (expected is None or sha256_file(dest) == expected):
        return dest
    if is_offline():
        raise UserError(
            f"{url}: not downloaded yet and HF_HUB_OFFLINE is set; download it and pass the "
            f"local path instead (or put it at {dest})"
        )
    _fetch(url, dest)
    return dest


# -- one entry point --------------------------------------------------------------------------------


def resolve_file(spec: str, sha256: str | None = None) -> Source:
    """A local path, ``hf://datasets/...`` path or http(s) URL -> a local file (downloaded if needed).

    Nothing is written to a warehouse here; a wrong ``sha256`` is a UserError.
    """
    expected = check_sha256(sha256)
    spec = str(spec)
    if spec.startswith("hf://"):
        repo, rev, fpath = parse_hf_path(spec)
        local, commit = hub_file(repo, fpath, rev)
        origin = f"hf://datasets/{repo}@{commit}/{fpath}"
    elif spec.startswith(("http://", "https://")):
        local, origin = url_file(spec, expected), spec
    else:
        local = Path(spec).expanduser()
        if not local.is_file():
            return Source(local, str(local.resolve()) if local.exists() else spec, None)
        origin = str(local.resolve())
    return Source(local, origin, verify_sha256(local, expected, spec))
