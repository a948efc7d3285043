"""A local stand-in for the Hugging Face Hub endpoints that huggingface_hub calls (tests only).

Start it with ``HubMock(token=...)`` (a ``http.server`` on 127.0.0.1, ephemeral port) and point
``HF_ENDPOINT`` at ``mock.url``. It keeps repositories in memory (files, LFS objects, commits) and
records every request, so tests can assert what ``ctxprior publish`` / ``pull`` asked for.

Endpoints (as read from huggingface_hub 2.x: hf_api.py, _commit_api.py, lfs.py, file_download.py):
- POST /api/repos/create                             create_repo (409 when it exists)
- POST /api/validate-yaml                            create_commit checks README.md front matter
- GET  /api/datasets/{id}[/revision/{rev}]           dataset_info / repo_info (?blobs=True: sizes, lfs sha256)
- GET  /api/datasets/{id}/tree/{rev}[/{path}]        list_repo_tree (snapshot_download)
- POST /api/datasets/{id}/preupload/{rev}            upload mode per file: lfs for *.parquet or > 10 MB
- POST /datasets/{id}.git/info/lfs/objects/batch     LFS batch API: upload + verify hrefs (basic transfer)
- PUT  /__lfs/{oid}, POST /__lfs_verify/{oid}        the LFS "storage" (checks the sha256 of the body)
- POST /api/datasets/{id}/commit/{rev}               ndjson commit (header, file, lfsFile, deletedFile)
- HEAD/GET /datasets/{id}/resolve/{rev}/{path}       file downloads
Requests without ``Authorization: Bearer <token>`` to write endpoints get 401. Xet is not
implemented: tests set ``huggingface_hub.constants.HF_HUB_DISABLE_XET`` (or HF_HUB_DISABLE_XET=1
in a subprocess) so uploads take the LFS path.

Every commit keeps a snapshot of the repository's files, so downloads at a pinned revision (a
commit sha) get that commit's files (``X-Repo-Commit`` = the commit), and an unknown revision is a
404 ``RevisionNotFound``. ``mock.add_dataset(repo_id, {path: bytes}, oid=...)`` publishes files
without going through the upload API (e.g. DynamicQA's CSVs at its pinned commit, for
``ctxprior ingest dynamicqa``).

``StaticServer(folder)`` serves a folder over plain HTTP on 127.0.0.1 (URL downloads in tests);
``StaticServer.refusing()`` gives a URL whose port refuses connections.
"""

from __future__ import annotations

import base64
import hashlib
import json
import os
import re
import threading
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any
from urllib.parse import parse_qs, unquote, urlsplit

GITATTRIBUTES = b"*.parquet filter=lfs diff=lfs merge=lfs -text\n"


def git_blob_sha1(data: bytes) -> str:
    return hashlib.sha1(b"blob %d\0" % len(data) + data).hexdigest()


@dataclass
class Request:
    method: str
    path: str
    query: dict[str, list[str]]
    headers: dict[str, str]
    body: bytes

    def json(self) -> Any:
        return json.loads(self.body.decode())

    def ndjson(self) -> list[dict]:
        return [json.loads(line) for line in self.body.decode().splitlines() if line.strip()]


@dataclass
class RepoFile:
    data: bytes | None  # regular file content
    lfs_sha256: str | None  # LFS object id
    size: int


@dataclass
class Repo:
    repo_id: str
    private: bool
    files: dict[str, RepoFile] = field(default_factory=dict)
    commits: list[dict] = field(default_factory=list)  # {oid, summary, description, paths}
    snapshots: dict[str, dict[str, RepoFile]] = field(default_factory=dict)  # commit oid -> files

    @property
    def head(self) -> str:
        return self.commits[-1]["oid"]

    def record(self, commit: dict) -> None:
        """Append a commit whose tree is the current ``files``."""
        self.commits.append(commit)
        self.snapshots[commit["oid"]] = dict(self.files)

    def at(self, rev: str) -> tuple[str, dict[str, RepoFile]] | None:
        """(commit oid, files) of a revision: ``main`` or a known commit; None when unknown."""
        if rev == "main":
            return self.head, self.files
        return (rev, self.snapshots[rev]) if rev in self.snapshots else None


class HubMock:
    def __init__(self, token: str):
        self.token = token
        self.repos: dict[str, Repo] = {}
        self.lfs: dict[str, bytes] = {}
        self.requests: list[Request] = []
        self.lock = threading.Lock()
        mock = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, *a):  # keep test output clean
                pass

            def _body(self) -> bytes:
                if self.headers.get("Transfer-Encoding", "").lower() == "chunked":
                    out = b""
                    while True:
                        size = int(self.rfile.readline().strip().split(b";")[0], 16)
                        if size == 0:
                            while self.rfile.readline().strip():
                                pass
                            return out
                        out += self.rfile.read(size)
                        self.rfile.readline()
                n = int(self.headers.get("Content-Length") or 0)
                return self.rfile.read(n) if n else b""

            def _handle(self, method: str) -> None:
                u = urlsplit(self.path)
                req = Request(
                    method,
                    unquote(u.path),
                    parse_qs(u.query),
                    {k.lower(): v for k, v in self.headers.items()},
                    self._body(),
                )
                with mock.lock:
                    mock.requests.append(req)
                    status, headers, body = mock.route(req)
                self.send_response(status)
                for k, v in headers.items():
                    self.send_header(k, v)
                if isinstance(body, (dict, list)):
                    body = json.dumps(body).encode()
                    if "Content-Type" not in headers:
                        self.send_header("Content-Type", "application/json")
                body = body or b""
                if "Content-Length" not in headers:
                    self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                if method != "HEAD":
                    self.wfile.write(body)

            def do_GET(self):
                self._handle("GET")

            def do_HEAD(self):
                self._handle("HEAD")

            def do_POST(self):
                self._handle("POST")

            def do_PUT(self):
                self._handle("PUT")

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}"
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)
        self.thread.start()

    def close(self) -> None:
        self.server.shutdown()
        self.server.server_close()

    # -- helpers for tests -----------------------------------------------------------------------
    def calls(self, method: str | None = None, pattern: str | None = None) -> list[Request]:
        return [
            r
            for r in self.requests
            if (method is None or r.method == method) and (pattern is None or re.search(pattern, r.path))
        ]

    def commits(self, repo_id: str) -> list[dict]:
        return self.repos[repo_id].commits if repo_id in self.repos else []

    def file_bytes(self, repo_id: str, path: str) -> bytes:
        f = self.repos[repo_id].files[path]
        return self._data(f)

    def _data(self, f: RepoFile) -> bytes:
        return f.data if f.data is not None else self.lfs[f.lfs_sha256]

    def add_dataset(
        self,
        repo_id: str,
        files: dict[str, bytes],
        oid: str | None = None,
        summary: str = "upload data",
        private: bool = False,
    ) -> str:
        """Publish ``files`` in one commit (creating the repo if needed), as if uploaded; return the
        commit oid (``oid`` when given, e.g. a real revision a command pins). *.parquet and files
        over 10 MB are stored as LFS objects, like the Hub does."""
        with self.lock:
            repo = self.repos.get(repo_id)
            if repo is None:
                repo = self.repos[repo_id] = Repo(repo_id, private=private)
                repo.files[".gitattributes"] = RepoFile(GITATTRIBUTES, None, len(GITATTRIBUTES))
            for path, data in files.items():
                if path.endswith(".parquet") or len(data) > 10_000_000:
                    sha = hashlib.sha256(data).hexdigest()
                    self.lfs[sha] = data
                    repo.files[path] = RepoFile(None, sha, len(data))
                else:
                    repo.files[path] = RepoFile(data, None, len(data))
            oid = oid or hashlib.sha1(f"{repo_id}{len(repo.commits)}{summary}".encode()).hexdigest()
            repo.record({"oid": oid, "summary": summary, "description": "", "paths": list(files)})
        return oid

    # -- routing -----------------------------------------------------------------------------------
    def _authorized(self, req: Request) -> bool:
        return req.headers.get("authorization") == f"Bearer {self.token}"

    @staticmethod
    def _err(status: int, msg: str, code: str | None = None) -> tuple[int, dict, dict]:
        h = {"X-Error-Message": msg}
        if code:
            h["X-Error-Code"] = code
        return status, h, {"error": msg}

    def _repo(self, repo_id: str, req: Request) -> Repo | None:
        repo = self.repos.get(repo_id)
        if repo is None or (repo.private and not self._authorized(req)):
            return None
        return repo

    def route(self, req: Request) -> tuple[int, dict, Any]:
        p, m = req.path, req.method
        write = m in ("POST", "PUT") and not p.startswith("/__lfs")
        if write and p != "/api/validate-yaml" and not self._authorized(req):
            return self._err(401, "Invalid credentials in Authorization header")
        if m == "POST" and p == "/api/repos/create":
            return self._create(req)
        if m == "POST" and p == "/api/validate-yaml":
            return self._validate_yaml(req)
        if m == "PUT" and p.startswith("/__lfs/"):
            return self._lfs_put(p.rsplit("/", 1)[1], req)
        if m == "POST" and p.startswith("/__lfs_verify/"):
            oid = p.rsplit("/", 1)[1]
            return (200, {}, {}) if oid in self.lfs else self._err(404, "object not uploaded")
        mt = re.fullmatch(r"/datasets/([^/]+/[^/]+)\.git/info/lfs/objects/batch", p)
        if m == "POST" and mt:
            return self._lfs_batch(mt.group(1), req)
        mt = re.fullmatch(r"/api/datasets/([^/]+/[^/]+)(?:/revision/([^/]+))?", p)
        if m == "GET" and mt:
            return self._info(mt.group(1), mt.group(2) or "main", req)
        mt = re.fullmatch(r"/api/datasets/([^/]+/[^/]+)/tree/([^/]+)(/.*)?", p)
        if m == "GET" and mt:
            return self._tree(mt.group(1), mt.group(2), (mt.group(3) or "").strip("/"), req)
        mt = re.fullmatch(r"/api/datasets/([^/]+/[^/]+)/preupload/([^/]+)", p)
        if m == "POST" and mt:
            return self._preupload(mt.group(1), req)
        mt = re.fullmatch(r"/api/datasets/([^/]+/[^/]+)/commit/([^/]+)", p)
        if m == "POST" and mt:
            return self._commit(mt.group(1), mt.group(2), req)
        mt = re.fullmatch(r"/datasets/([^/]+/[^/]+)/resolve/([^/]+)/(.+)", p)
        if m in ("GET", "HEAD") and mt:
            return self._resolve(mt.group(1), mt.group(2), mt.group(3), req)
        return self._err(404, f"mock hub: no route for {m} {p}")

    def _create(self, req: Request):
        body = req.json()
        if body.get("type") != "dataset":
            return self._err(400, "mock hub only hosts datasets")
        repo_id = (
            f"{body['organization']}/{body['name']}" if body.get("organization") else f"user/{body['name']}"
        )
        url = f"{self.url}/datasets/{repo_id}"
        if repo_id in self.repos:
            return (
                409,
                {"X-Error-Message": "You already created this dataset repo"},
                {"error": "You already created this dataset repo", "url": url},
            )
        repo = Repo(repo_id, private=body.get("visibility") == "private" or bool(body.get("private")))
        repo.files[".gitattributes"] = RepoFile(GITATTRIBUTES, None, len(GITATTRIBUTES))
        repo.record(
            {
                "oid": hashlib.sha1(f"init {repo_id}".encode()).hexdigest(),
                "summary": "initial commit",
                "description": "",
                "paths": [".gitattributes"],
            }
        )
        self.repos[repo_id] = repo
        return 200, {}, {"url": url, "name": repo_id, "id": repo_id}

    def _validate_yaml(self, req: Request):
        import yaml

        content = req.json().get("content", "")
        mt = re.match(r"^---\n(.*?)\n---\n", content, re.S)
        errors = []
        try:
            meta = yaml.safe_load(mt.group(1)) if mt else None
            if not isinstance(meta, dict) or not isinstance(meta.get("configs"), list):
                errors.append({"message": "configs: expected a list in the YAML front matter"})
        except yaml.YAMLError as e:
            errors.append({"message": f"YAML: {e}"})
        return (400 if errors else 200), {}, {"errors": errors, "warnings": []}

    def _info(self, repo_id: str, rev: str, req: Request):
        repo = self._repo(repo_id, req)
        if repo is None:
            return self._err(404, "Repository not found", "RepoNotFound")
        snap = repo.at(rev)
        if snap is None:
            return self._err(404, "Invalid rev id", "RevisionNotFound")
        sha, files = snap
        blobs = req.query.get("blobs", ["false"])[0].lower() == "true"
        siblings = []
        for path, f in sorted(files.items()):
            s: dict[str, Any] = {"rfilename": path}
            if blobs:
                s["size"] = f.size
                if f.lfs_sha256:
                    pointer = self._pointer(f)
                    s["blobId"] = git_blob_sha1(pointer)
                    s["lfs"] = {"size": f.size, "sha256": f.lfs_sha256, "pointerSize": len(pointer)}
                else:
                    s["blobId"] = git_blob_sha1(f.data)
            siblings.append(s)
        return (
            200,
            {},
            {
                "id": repo_id,
                "_id": repo_id,
                "private": repo.private,
                "sha": sha,
                "siblings": siblings,
                "tags": [],
            },
        )

    @staticmethod
    def _pointer(f: RepoFile) -> bytes:
        return (
            f"version https://git-lfs.github.com/spec/v1\noid sha256:{f.lfs_sha256}\nsize {f.size}\n"
        ).encode()

    def _tree(self, repo_id: str, rev: str, path: str, req: Request):
        repo = self._repo(repo_id, req)
        if repo is None:
            return self._err(404, "Repository not found", "RepoNotFound")
        snap = repo.at(rev)
        if snap is None:
            return self._err(404, "Invalid rev id", "RevisionNotFound")
        items = []
        for fp, f in sorted(snap[1].items()):
            if path and not fp.startswith(path + "/"):
                continue
            item: dict[str, Any] = {"type": "file", "path": fp, "size": f.size}
            if f.lfs_sha256:
                pointer = self._pointer(f)
                item["oid"] = git_blob_sha1(pointer)
                item["lfs"] = {"oid": f.lfs_sha256, "size": f.size, "pointerSize": len(pointer)}
            else:
                item["oid"] = git_blob_sha1(f.data)
            items.append(item)
        return 200, {}, items

    def _preupload(self, repo_id: str, req: Request):
        repo = self._repo(repo_id, req)
        if repo is None:
            return self._err(404, "Repository not found", "RepoNotFound")
        out = []
        for f in req.json()["files"]:
            lfs = f["path"].endswith(".parquet") or f["size"] > 10_000_000
            cur = repo.files.get(f["path"])
            oid = None
            if cur is not None:
                oid = cur.lfs_sha256 if cur.lfs_sha256 else git_blob_sha1(cur.data)
            out.append(
                {
                    "path": f["path"],
                    "uploadMode": "lfs" if lfs else "regular",
                    "shouldIgnore": False,
                    "oid": oid,
                }
            )
        return 200, {}, {"files": out, "commitOid": repo.head}

    def _lfs_batch(self, repo_id: str, req: Request):
        if self._repo(repo_id, req) is None:
            return self._err(404, "Repository not found", "RepoNotFound")
        body = req.json()
        if body.get("operation") != "upload" or "basic" not in body.get("transfers", []):
            return self._err(400, "mock hub: expected an upload with the basic transfer")
        objs = []
        for o in body["objects"]:
            item: dict[str, Any] = {"oid": o["oid"], "size": o["size"]}
            if o["oid"] not in self.lfs:
                item["actions"] = {
                    "upload": {"href": f"{self.url}/__lfs/{o['oid']}"},
                    "verify": {"href": f"{self.url}/__lfs_verify/{o['oid']}"},
                }
            objs.append(item)
        return 200, {"Content-Type": "application/vnd.git-lfs+json"}, {"transfer": "basic", "objects": objs}

    def _lfs_put(self, oid: str, req: Request):
        if hashlib.sha256(req.body).hexdigest() != oid:
            return self._err(400, "sha256 of the uploaded body does not match the object id")
        self.lfs[oid] = req.body
        return 200, {}, b""

    def _commit(self, repo_id: str, rev: str, req: Request):
        repo = self._repo(repo_id, req)
        if repo is None:
            return self._err(404, "Repository not found", "RepoNotFound")
        if req.headers.get("content-type") != "application/x-ndjson":
            return self._err(400, "expected application/x-ndjson")
        lines = req.ndjson()
        if not lines or lines[0].get("key") != "header":
            return self._err(400, "commit payload must start with a header line")
        header = lines[0]["value"]
        if header.get("parentCommit") and header["parentCommit"] != repo.head:
            return self._err(412, "A commit has happened since. Please refresh and try again.")
        files = dict(repo.files)
        paths = []
        for line in lines[1:]:
            k, v = line["key"], line["value"]
            if k == "file":
                data = base64.b64decode(v["content"])
                files[v["path"]] = RepoFile(data, None, len(data))
            elif k == "lfsFile":
                if v["oid"] not in self.lfs:
                    return self._err(400, f"LFS object {v['oid']} of {v['path']} was never uploaded")
                files[v["path"]] = RepoFile(None, v["oid"], len(self.lfs[v["oid"]]))
            elif k == "deletedFile":
                if v["path"] not in files:
                    return self._err(404, "A file with this name doesn't exist", "EntryNotFound")
                del files[v["path"]]
            elif k == "deletedFolder":
                for fp in [fp for fp in files if fp.startswith(v["path"].rstrip("/") + "/")]:
                    del files[fp]
            else:
                return self._err(400, f"unknown commit operation {k}")
            paths.append((k, v["path"]))
        oid = hashlib.sha1(f"{repo.head}{len(repo.commits)}{header['summary']}".encode()).hexdigest()
        repo.files = files
        repo.record(
            {
                "oid": oid,
                "summary": header["summary"],
                "description": header.get("description", ""),
                "paths": paths,
            }
        )
        return (
            200,
            {},
            {
                "commitUrl": f"{self.url}/datasets/{repo_id}/commit/{oid}",
                "commitOid": oid,
                "pullRequestUrl": None,
                "success": True,
            },
        )

    def _resolve(self, repo_id: str, rev: str, path: str, req: Request):
        repo = self._repo(repo_id, req)
        if repo is None:
            return self._err(404, "Repository not found", "RepoNotFound")
        snap = repo.at(rev)
        if snap is None:
            return self._err(404, "Invalid rev id", "RevisionNotFound")
        f = snap[1].get(path)
        if f is None:
            return self._err(404, "Entry not found", "EntryNotFound")
        data = self._data(f)
        etag = f.lfs_sha256 or git_blob_sha1(f.data)
        h = {
            "X-Repo-Commit": snap[0],
            "ETag": f'"{etag}"',
            "Content-Length": str(len(data)),
            "Content-Type": "application/octet-stream",
            "Accept-Ranges": "bytes",
        }
        if f.lfs_sha256:
            h["X-Linked-Etag"] = f'"{etag}"'
            h["X-Linked-Size"] = str(len(data))
        return 200, h, data


# Variables that switch the Hugging Face libraries offline (common on offline GPU clusters). A
# test that talks to a local stand-in must not inherit them from the shell that runs pytest.
OFFLINE_VARS = ("HF_HUB_OFFLINE", "TRANSFORMERS_OFFLINE", "HF_DATASETS_OFFLINE")


def go_online(monkeypatch) -> None:
    """Undo the shell's offline switches for one test: the variables, and huggingface_hub's
    constant, which it reads once at import (from HF_HUB_OFFLINE or TRANSFORMERS_OFFLINE)."""
    from huggingface_hub import constants

    for k in OFFLINE_VARS:
        monkeypatch.delenv(k, raising=False)
    monkeypatch.setattr(constants, "HF_HUB_OFFLINE", False)


def fresh_hf_home(monkeypatch, tmp_path) -> Path:
    """For one test: online (:func:`go_online`), no Hugging Face cache, token or endpoint from the
    shell, a fresh HF_HOME under ``tmp_path``, no telemetry, no proxy for the local stand-ins."""
    go_online(monkeypatch)
    for k in ("HF_HUB_CACHE", "HUGGINGFACE_HUB_CACHE", "HF_ASSETS_CACHE", "HF_TOKEN", "HF_ENDPOINT"):
        monkeypatch.delenv(k, raising=False)
    monkeypatch.setenv("HF_HOME", str(tmp_path / "hf_home"))
    monkeypatch.setenv("HF_HUB_DISABLE_TELEMETRY", "1")
    monkeypatch.setenv("NO_PROXY", "127.0.0.1,localhost")
    return tmp_path / "hf_home"


def local_hub(monkeypatch, tmp_path):
    """A :class:`HubMock` as HF_ENDPOINT, over :func:`fresh_hf_home`; a generator for a fixture."""
    fresh_hf_home(monkeypatch, tmp_path)
    mock = HubMock(token="unused")
    monkeypatch.setenv("HF_ENDPOINT", mock.url)
    yield mock
    mock.close()


def subprocess_env(**extra: str) -> dict[str, str]:
    """This process's environment for a child, without Hugging Face variables or offline switches."""
    env = {
        k: v
        for k, v in os.environ.items()
        if not k.startswith(("HF_", "HUGGING")) and k not in OFFLINE_VARS and k != "CTXPRIOR_DB"
    }
    env.update(extra)
    return env


class StaticServer:
    """A folder served over plain HTTP on 127.0.0.1 (``python -m http.server`` in a thread).

    ``truncate = N``: the next N GETs of a file announce its full Content-Length but send only
    the first half and close the connection (a transfer cut short)."""

    def __init__(self, folder):
        from functools import partial
        from http.server import SimpleHTTPRequestHandler

        class Quiet(SimpleHTTPRequestHandler):
            def log_message(self, *a):
                pass

        self.requests: list[str] = []
        self.truncate = 0
        server = self

        class Recording(Quiet):
            def do_GET(self):
                server.requests.append(self.path)
                path = self.translate_path(self.path)
                if server.truncate > 0 and os.path.isfile(path):
                    server.truncate -= 1
                    data = open(path, "rb").read()
                    self.send_response(200)
                    self.send_header("Content-Length", str(len(data)))
                    self.end_headers()
                    self.wfile.write(data[: len(data) // 2])
                    self.close_connection = True
                    return
                super().do_GET()

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), partial(Recording, directory=str(folder)))
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}"
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)
        self.thread.start()

    def close(self) -> None:
        self.server.shutdown()
        self.server.server_close()

    @staticmethod
    def refusing() -> str:
        """http://127.0.0.1:<port> where nothing listens (connection refused)."""
        import socket

        with socket.socket() as s:
            s.bind(("127.0.0.1", 0))
            return f"http://127.0.0.1:{s.getsockname()[1]}"
