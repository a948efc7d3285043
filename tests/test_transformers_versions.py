"""transformers from the floor (``transformers>=4.56`` in pyproject.toml) to the newest release
(issue 26): the engine passes its key/value cache under the name the installed release takes
(``past_key_values`` before 5.24, ``cache`` since), with no deprecation warning, scores exactly
in both, and fails loudly when a forward pass ignores the cache it was given."""

from __future__ import annotations

import inspect
import json
import os
import re
import subprocess
import sys
import warnings
from pathlib import Path

import pytest
from transformers_floor import FLOOR, floor_dir

from ctxprior.scoring.engine import Engine
from ctxprior.scoring.hfcompat import CacheIgnored, cache_arg

pytestmark = pytest.mark.usefixtures("one_torch_thread")
ROOT = Path(__file__).resolve().parents[1]

# run in a process: the engine against one prompt at a time, warnings recorded
PROBE = r"""
import json, sys, warnings
sys.path.insert(0, "tests")
warnings.simplefilter("always")
with warnings.catch_warnings(record=True) as caught:
    warnings.simplefilter("always")
    import numpy as np, torch, transformers
    from scoring_helpers import one_at_a_time, prompts, tiny_family
    from ctxprior.scoring.engine import Engine
    out = {"version": transformers.__version__}
    for family in ("gpt_neox", "llama"):
        lm = tiny_family(family)
        contexts, queries = prompts()
        eng = Engine(lm, batch_size=4)
        seqs = eng.encode([c + q for q in queries for c in contexts])
        nc, nq = len(contexts), len(queries)
        groups = [[i * nc + j for i in range(nq)] for j in range(nc)]
        table, row_of = eng.last_logprobs(seqs, groups)
        got = table[torch.tensor(row_of)].double().numpy()
        out[family] = float(np.abs(got - one_at_a_time(lm, seqs)).max())
        out[family + "_greedy"] = eng.greedy(seqs[:4], max_new_tokens=3, groups=[[0, 1, 2, 3]])
out["warnings"] = [str(w.message)[:200] for w in caught if "cache" in str(w.message) or "past_key_values" in str(w.message)]
print(json.dumps(out))
"""


def _probe(extra_path: str | None = None) -> dict:
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(p for p in (extra_path, str(ROOT / "src")) if p)}
    res = subprocess.run(
        [sys.executable, "-c", PROBE], cwd=ROOT, env=env, capture_output=True, text=True, timeout=600
    )
    assert res.returncode == 0, res.stderr[-3000:]
    return json.loads(res.stdout.strip().splitlines()[-1])


def test_installed_release_scores_exactly_without_warnings():
    out = _probe()
    assert out["gpt_neox"] < 2e-5 and out["llama"] < 2e-5, out
    assert out["warnings"] == [], out["warnings"]


@pytest.mark.slow
def test_floor_release_scores_exactly_like_the_newest(tmp_path_factory):
    """transformers 4.56 (the floor) in a side folder on PYTHONPATH: exact, and the same greedy
    continuations as the installed release."""
    floor = floor_dir()
    old, new = _probe(str(floor)), _probe()
    assert old["version"] == FLOOR[0].split("==")[1]
    assert old["gpt_neox"] < 2e-5 and old["llama"] < 2e-5, old
    assert old["warnings"] == [], old["warnings"]
    assert old["gpt_neox_greedy"] == new["gpt_neox_greedy"] and old["llama_greedy"] == new["llama_greedy"]


class _Forgetful:
    """A model body whose forward takes the cache argument and drops it (what a renamed argument
    falling into ``**kwargs`` would do)."""

    def __init__(self, body):
        self.body = body
        self.__signature__ = inspect.signature(type(body).forward)

    def __call__(self, **kw):
        for name in ("cache", "past_key_values"):
            kw.pop(name, None)
        return self.body(**kw)


def test_a_forward_pass_that_ignores_the_cache_fails_loudly():
    from scoring_helpers import prompts, tiny_family

    lm = tiny_family("llama")
    eng = Engine(lm, batch_size=4)
    eng.body = _Forgetful(eng.body)
    contexts, queries = prompts()
    seqs = eng.encode([c + queries[0] for c in contexts] + [c + queries[1] for c in contexts])
    groups = [[j, len(contexts) + j] for j in range(len(contexts))]
    with pytest.raises(CacheIgnored, match="ignored the key/value cache"):
        eng.last_logprobs(seqs, groups)


def test_cache_arg_reads_the_forward_signature():
    from scoring_helpers import tiny_family

    model = tiny_family("llama").model
    params = inspect.signature(type(model).forward).parameters
    assert list(cache_arg(model, None)) == ["cache" if "cache" in params else "past_key_values"]
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # no deprecation warning from the name the engine passes
        eng = Engine(tiny_family("gpt_neox"), batch_size=4)
        eng.last_logprobs(eng.encode(["a b c d", "a b c e"]), [[0, 1]])


@pytest.mark.parametrize("env", [None, "1"])
def test_the_console_hides_libraries_deprecation_notices_not_ours(env, monkeypatch):
    from ctxprior.cli import WARNINGS_ENV, _quiet_libraries

    monkeypatch.setattr(sys, "warnoptions", [])
    if env:
        monkeypatch.setenv(WARNINGS_ENV, env)
    else:
        monkeypatch.delenv(WARNINGS_ENV, raising=False)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        _quiet_libraries()
        for module in ("transformers.modeling_utils", "ctxprior.scoring.engine"):
            warnings.warn_explicit("`x` is deprecated", FutureWarning, "f.py", 1, module=module)
        warnings.warn_explicit("a real problem", UserWarning, "f.py", 2, module="transformers.x")
    shown = [(w.category.__name__, str(w.message)) for w in caught]
    lib = ("FutureWarning", "`x` is deprecated")
    assert shown.count(lib) == (2 if env else 1)
    assert ("UserWarning", "a real problem") in shown


def test_docs_check_drops_another_librarys_warning_lines():
    sys.path.insert(0, str(ROOT / "scripts"))
    import docs_examples

    text = (
        "/x/.venv/lib/python3.11/site-packages/torch/nn/modules/module.py:1789: FutureWarning: "
        "`past_key_values` is deprecated\n  return forward_call(*args, **kwargs)\nrun 1: done\n"
    )
    for pattern, repl in docs_examples.REWRITE:
        text = re.sub(pattern, repl, text)
    assert text == "run 1: done\n"
