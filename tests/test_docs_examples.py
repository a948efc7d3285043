"""The console examples in docs/ print what the commands print now (scripts/docs_examples.py).

A page takes part with ``<!-- docs-examples: ... -->`` under its title; ``marks=slow`` (it loads
SmolLM2) or ``marks=shared_data`` there become pytest marks. When this fails, the diff shows the
drift: fix the command, or rewrite the page with ``python scripts/docs_examples.py --update PAGE``
and review the diff."""

from __future__ import annotations

import importlib.util
import os
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
_spec = importlib.util.spec_from_file_location("docs_examples", ROOT / "scripts" / "docs_examples.py")
docs_examples = importlib.util.module_from_spec(_spec)
sys.modules["docs_examples"] = docs_examples  # dataclasses look their module up there
_spec.loader.exec_module(docs_examples)


def _pages():
    for page in sorted((ROOT / "docs").glob("*.md")):
        opts, _ = docs_examples.parse_page(page.read_text())
        if opts is not None:
            marks = [getattr(pytest.mark, m) for m in opts.get("marks", "").split(",") if m]
            yield pytest.param(page, id=page.name, marks=marks)


@pytest.mark.parametrize("page", list(_pages()))
def test_docs_examples_have_not_drifted(page, request):
    shared = Path(os.environ.get("CTXPRIOR_SHARED", ROOT.parent / "shared"))
    if request.node.get_closest_marker("shared_data") and not (shared / "data").is_dir():
        pytest.fail(
            f"{page.name} runs on the real data under {shared / 'data'}, which is not there "
            "(scripts/test.sh deselects shared_data tests then)",
            pytrace=False,
        )
    diffs = docs_examples.run_page(page, update=False, log=lambda s: None)
    assert not diffs, f"{page.name}: examples drifted; rerun scripts/docs_examples.py --update\n" + "\n".join(
        diffs
    )


PAGE = """# A page

<!-- docs-examples: timeout=60 -->

```console
$ cat greeting.txt
hello
  world
$ wc -l < greeting.txt
2

$ python -c "import time; print(f'took {time.perf_counter() % 1 + 1:.2f} s')"
took 1.23 s
$ printf 'a\\nb\\nc\\nd\\n'
a
...
d
```

```console
note: a block without a command is left as it is
```

<!-- docs-examples: skip: never runs -->
```console
$ false
nothing
```

- In a list:
  <!-- docs-examples: run: echo 3 > n.txt -->
  ```console
  $ cat n.txt
  4

  $ echo "two
  lines"
  stale
  ```
"""


def test_update_rewrites_only_drifted_outputs_and_is_idempotent(tmp_path):
    page = tmp_path / "page.md"
    page.write_text(PAGE)
    diffs = docs_examples.run_page(page, update=True, log=lambda s: None)
    assert len(diffs) == 2, diffs  # the `cat n.txt` (3, not 4) and the echo; the timing is normalised
    text = page.read_text()
    assert text == PAGE.replace("  $ cat n.txt\n  4\n", "  $ cat n.txt\n  3\n").replace(
        '  lines"\n  stale\n', '  lines"\n  two\n  lines\n'
    )
    assert docs_examples.run_page(page, update=True, log=lambda s: None) == []
    assert page.read_text() == text


def test_fork_server_commands_print_and_exit_as_the_console_script(monkeypatch):
    """A page's ``ctxprior`` runs forked from the page's server (scripts/docs_forkserver.py): the
    same output and exit status as the console script itself, stdin passed through, a command
    with another environment executed as the script, a signal that ends the command ending it."""
    cmds = [
        "ctxprior ingest demo > /dev/null; echo rc=$?",
        'ctxprior sql "SELECT count(*) AS n FROM fact"',
        "ctxprior nosuch; echo rc=$?",
        "ctxprior sql --max-rows 0 'SELEC'; echo rc=$?",
        "echo 'SELECT 41 + 1 AS x' > q.sql; ctxprior sql --file q.sql < /dev/null",
        'CTXPRIOR_QUERY_TIMEOUT=5 ctxprior sql "SELECT 2 AS y"',  # ctxprior's own: still forked
        'OTHER_LIBRARY_SETTING=1 ctxprior sql "SELECT 3 AS z"',  # another variable: executed
        "ctxprior --help | head -n 3",
    ]
    outputs = {}
    for fork in ("1", "0"):
        monkeypatch.setenv("CTXPRIOR_DOCS_FORK", fork)
        session = docs_examples.Session(60)
        try:
            outputs[fork] = [session.run(c) for c in cmds]
            if fork == "1":
                log = (session.tmp / "fork.log").read_text()
                # a command the client sends to a running server that is then killed by SIGTERM
                killed = session.run(
                    'ctxprior sql "SELECT count(*) FROM range(100000000000)" & sleep 2; kill -TERM $!; wait $!; echo rc=$?'
                )
        finally:
            session.close()
    assert outputs["1"] == outputs["0"]
    assert outputs["1"][0] == ["rc=0"] and outputs["1"][2][-1] == "rc=2"
    assert log.count("exec ") == 1 and "OTHER_LIBRARY_SETTING" in log
    assert killed[-1] == "rc=143", killed  # 128 + SIGTERM, as bash reports the script's
