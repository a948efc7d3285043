"""The options of ``ctxprior export parquet`` / ``import parquet`` / ``publish`` / ``pull`` and of
their API methods (``wh.parquet.export`` / ``wh.parquet.load`` / ``wh.hub.publish`` / ``wh.hub.pull``),
each declared once (``ctxprior.options.Option``)."""

from __future__ import annotations

from ..options import Option

IMPORT_MODES = ("fail", "merge", "replace")

MODE = Option(
    "mode",
    None,
    "fail: the warehouse must have no rows; merge: add the rows it lacks (rows with an existing id "
    "must be identical); replace: delete every row first, then load (one transaction). The CLI's "
    "--merge / --replace.",
    default="fail",
    choices=IMPORT_MODES,
)

_RUNS_HELP = "Only rows of these runs in tables/views with a run_id column (comma-separated)."

EXPORT_OPTIONS = (
    Option("directory", None, "Folder to write.", argument=True, required=True, directory=True),
    Option(
        "tables",
        "--tables",
        "Only these tables (comma-separated or repeated). Default: every table.",
        multiple=True,
        metavar="NAMES",
    ),
    Option(
        "views",
        "--views",
        "Only these views (comma-separated or repeated); 'all' for every view.",
        multiple=True,
        metavar="NAMES",
    ),
    Option("runs", "--runs", _RUNS_HELP, multiple=True, metavar="IDS"),
    Option("overwrite", "--overwrite", "Replace an earlier export in DIRECTORY.", default=False, kind=bool),
)

IMPORT_OPTIONS = (
    Option("directory", None, "Folder to read.", argument=True, required=True, directory=True),
    MODE,
)

PUBLISH_OPTIONS = (
    Option("repo_id", None, "Hub dataset OWNER/NAME.", argument=True, required=True, metavar="REPO_ID"),
    Option(
        "private",
        "--private",
        "Create the Hub repository as private (ignored if it exists).",
        default=False,
        kind=bool,
    ),
    Option(
        "runs",
        "--runs",
        "Publish only these runs (comma-separated). Default: every run with status done.",
        multiple=True,
        metavar="IDS",
    ),
    Option(
        "include_distributions",
        "--include-distributions",
        "Also publish the heavy per-prompt tables (prompt_topk, persuasion_layer).",
        default=False,
        kind=bool,
    ),
    Option(
        "dry_run",
        "--dry-run",
        "Write exactly what would be uploaded into DIR and upload nothing.",
        metavar="DIR",
        directory=True,
    ),
    Option(
        "token_env",
        "--token-env",
        "Read the Hub token from this environment variable (default: HF_TOKEN, then `hf auth login`).",
        metavar="VAR",
    ),
    Option("license", "--license", "License id for the card, e.g. cc-by-4.0.", metavar="ID"),
    Option(
        "citation", "--citation", "Citation (BibTeX) for the card, or a file holding it.", metavar="TEXT|FILE"
    ),
    Option(
        "message",
        "--message",
        "Commit summary (default names the ctxprior version and runs).",
        metavar="TEXT",
    ),
    Option(
        "overwrite",
        "--overwrite",
        "With --dry-run: replace an earlier dry run in DIR.",
        default=False,
        kind=bool,
    ),
)

PULL_OPTIONS = (
    Option(
        "source",
        None,
        "A local folder, or OWNER/NAME on the Hub.",
        argument=True,
        required=True,
        metavar="SOURCE",
    ),
    MODE,
    Option("revision", "--revision", "Hub branch, tag or commit (default: main).", metavar="REV"),
    Option("token_env", "--token-env", "Read the Hub token from this environment variable.", metavar="VAR"),
)
