"""How much do the DynamicQA departures from the released code (copenlu/dynamicqa) move the numbers?

One generation pass per fact (SmolLM2-135M-Instruct on the CPU, score-dynamic's defaults: N = 10
samples at T = 0.5, 20 new tokens, prompts as score-dynamic; embedding:minilm at --threshold), then
every variant from the same samples: CP over every generated step vs the answer tokens, KL with
zeros kept (+inf) vs dropped, a float16 what-if, the Monte-Carlo SE from summed vs per-token mean
log-likelihoods, the released code's greedy clustering pass (overlaps, set order), clusters without
the question, ROUGE-L vs alias labels, greedy vs sampled answers, and (when the rouge_score package
is importable, e.g. ``pip install --target /tmp/rs rouge_score`` with ``--extra-path /tmp/rs``) the
in-house ROUGE-L against rouge_score with and without its Porter stemmer. Results:
docs/departures.md#dynamicqa-marjanovic-et-al-2024.

    python benchmarks/dynamicqa_departures.py --data ../shared/data/dynamicqa --limit 20 --out dq.jsonl
    python benchmarks/dynamicqa_departures.py --summarize dq.jsonl
"""

from __future__ import annotations

import argparse
import json
import math
import random
import sys
import tempfile
import time
from pathlib import Path

import numpy as np
import torch

from ctxprior.dynamicqa import answers
from ctxprior.dynamicqa import semantic as sem
from ctxprior.dynamicqa.config import CONDITIONS, PROMPT_CTX, PROMPT_NONE, DynamicConfig
from ctxprior.dynamicqa.facts import _fact_seed, fact_rows
from ctxprior.dynamicqa.sample import resolve_dataset, select_facts
from ctxprior.scoring.generate import Sampling, generate, stop_ids
from ctxprior.storage import open_store

STEM = NOSTEM = None  # rouge_score scorers, when importable


def _rouge_score(scorer, a, b):
    return scorer.score(a, b)["rougeL"].fmeasure if scorer else float("nan")


def authors_clusters(eq):
    """robust_persuasion.py evaluate_semantic_sim on an equivalence matrix; returns the cluster strings."""
    n = eq.shape[0]
    entail_info = {i: [] for i in range(n)}
    for i in range(n):
        for j in range(i + 1, n):
            if eq[i, j]:
                entail_info[i].append(j)
                entail_info[j].append(i)
    cluster_list = []
    for idx, ents in entail_info.items():
        cluster = [idx]
        for ent in ents:
            if idx in entail_info[ent]:
                flag = False
                for other in cluster:
                    flag = other in entail_info[ent] and ent in entail_info[other]
                if flag:
                    cluster.append(ent)
        cluster_list.append("-".join(str(m) for m in sorted(cluster)))
    return list(set(cluster_list))


def translate(clusters, n):
    to_fill = np.zeros(n, dtype=int)
    for i, st in enumerate(clusters):
        for j in st.split("-"):
            to_fill[int(j)] = i
    return to_fill


def authors_cp(clusters_c, clusters_q, probs_c, probs_q):
    import scipy.special

    pa = [np.mean([probs_c[int(m)] for m in c.split("-")], axis=0) for c in clusters_c]
    pb = [np.mean([probs_q[int(m)] for m in c.split("-")], axis=0) for c in clusters_q]
    out = []
    for a in pa:
        for b in pb:
            v = scipy.special.rel_entr(a, b)
            out.append(np.sum(np.ma.masked_invalid(v).compressed()))
    return float(np.mean(out))


def measure(db, limit, out, threshold):
    from ctxprior.scoring.models import load_model

    wh = open_store(db, read_only=True)
    ds = resolve_dataset(wh, "dynamicqa")
    facts = fact_rows(select_facts(wh, ds, ["static", "temporal", "disputable"], limit), wh)
    wh.close()
    lm = load_model("smollm2-135m", device="cpu")
    eqm = sem.EmbeddingEquivalence("minilm", threshold)
    chat = bool(getattr(lm.tokenizer, "chat_template", None))
    stop = stop_ids(lm.tokenizer, lm.model)
    cfg = DynamicConfig()
    f = open(out, "a")
    for fact in facts:
        t0 = time.time()
        q = fact["question"]
        ctxs = {
            "original": fact["template"].format(answer=fact["object"]),
            "counter": fact["template"].format(answer=fact["replace_name"]),
        }
        contents = [PROMPT_NONE.format(question=q)] + [
            PROMPT_CTX.format(context=ctxs[c], question=q) for c in ("original", "counter")
        ]
        prompts = [answers.build_prompt(lm.tokenizer, c, chat) for c in contents]
        ids = [lm.tokenizer(p, add_special_tokens=False)["input_ids"] for p in prompts]
        g = generate(
            lm,
            ids,
            cfg.max_new_tokens,
            Sampling(temperature=cfg.temperature, seed=_fact_seed(0, fact["fact_id"])),
            repeat=cfg.samples + 1,
            greedy_first=True,
            keep_logits=True,
        )
        seqs, logits = g.tokens, g.logits
        r = cfg.samples + 1
        S = {}
        for rule in ("generated", "answer"):
            S[rule] = answers._answers(lm.tokenizer, seqs, logits, r, 3, stop, rule)
        # float16 what-if: softmax of float16 logits over every generated step (the authors' 8-bit/fp16 runs)
        f16 = []
        for b in range(seqs.shape[0]):
            toks = seqs[b].tolist()
            m, end = answers._answer_len(lm.tokenizer, toks, stop)
            k = min(end + 1, len(toks))
            f16.append(torch.softmax(logits[b, :k].half(), -1).float().mean(0).double())
        rec = {
            "fact_id": fact["fact_id"],
            "partition": fact["partition"],
            "id": fact["id"],
            "object": fact["object"],
            "replace_name": fact["replace_name"],
            "conds": {},
        }
        sampled, greedy = S["generated"]
        labels_cc, labels_auth, labels_noq, auth_clusters = {}, {}, {}, {}
        for ci, cond in enumerate(CONDITIONS):
            texts = [a.text for a in sampled[ci]]
            labels_cc[cond] = eqm.cluster(q, texts)
            eq = eqm.equivalent(q, texts)
            ac = authors_clusters(eq)
            auth_clusters[cond] = ac
            labels_auth[cond] = translate(ac, len(texts))
            # the authors' NLI input has no question: the same embedding test on the answers alone
            labels_noq[cond] = eqm.cluster("", texts)
        for ci, cond in enumerate(CONDITIONS):
            ans = sampled[ci]
            lps = [a.logprob_sum for a in ans]
            nt = [a.n_tokens for a in ans]
            c = {
                "greedy": greedy[ci].text,
                "texts": [a.text for a in ans],
                "n_tokens": nt,
                "n_clusters": len(np.unique(labels_cc[cond])),
                "n_clusters_authors_pass": len(auth_clusters[cond]),
                "overlap": int(sum(len(x.split("-")) for x in auth_clusters[cond]) > len(ans)),
                "n_clusters_noq": len(np.unique(labels_noq[cond])),
                "se_mc_sum": sem.semantic_entropy_mc(lps, labels_cc[cond], 5.0),
                "se_mc_authors": sem.semantic_entropy_mc(
                    sem.sample_logliks(lps, nt, "authors"), labels_cc[cond], 5.0
                ),
                "se_mc_authors_authors_pass": sem.semantic_entropy_mc(
                    sem.sample_logliks(lps, nt, "authors"), labels_auth[cond], 5.0
                ),
                "se_sum": sem.semantic_entropy(lps, labels_cc[cond]),
            }
            # the same SE under 20 other orders of the authors' set of cluster strings (PYTHONHASHSEED)
            ses = set()
            for s in range(20):
                ac = list(auth_clusters[cond])
                random.Random(s).shuffle(ac)
                ses.add(
                    round(
                        sem.semantic_entropy_mc(
                            sem.sample_logliks(lps, nt, "authors"), translate(ac, len(ans)), 5.0
                        ),
                        9,
                    )
                )
            c["se_authors_hash_orders"] = len(ses)
            if cond != "none":
                for rule in ("generated", "answer"):
                    ld = {
                        cc: torch.stack([a.logdist for a in S[rule][0][k]]) for k, cc in enumerate(CONDITIONS)
                    }
                    c[f"cp_{rule}"] = sem.coherent_persuasion(
                        ld[cond], labels_cc[cond], ld["none"], labels_cc["none"]
                    )
                    c[f"cp_{rule}_drop"] = sem.coherent_persuasion(
                        ld[cond], labels_cc[cond], ld["none"], labels_cc["none"], "drop"
                    )
                    pn = [x.logdist.exp() for x in S[rule][0][0]]
                    c[f"min_prob_{rule}"] = float(min(float(torch.min(x)) for x in pn))
                # float16 what-if over the generated steps: zeros, CP true vs dropped
                pc = [f16[(ci) * r + 1 + k] for k in range(cfg.samples)]
                pq = [f16[1 + k] for k in range(cfg.samples)]
                c["f16_zero_frac_noctx"] = float(np.mean([float((x == 0).double().mean()) for x in pq]))
                lc, lq = torch.stack(pc).log(), torch.stack(pq).log()
                c["cp_f16_inf"] = sem.coherent_persuasion(lc, labels_cc[cond], lq, labels_cc["none"])
                c["cp_f16_drop"] = sem.coherent_persuasion(lc, labels_cc[cond], lq, labels_cc["none"], "drop")
                c["cp_authors_code"] = authors_cp(
                    auth_clusters[cond],
                    auth_clusters["none"],
                    [S["generated"][0][ci][k].logdist.exp().numpy() for k in range(cfg.samples)],
                    [S["generated"][0][0][k].logdist.exp().numpy() for k in range(cfg.samples)],
                )
                ctx_ans = fact["object"] if cond == "original" else fact["replace_name"]
                al = (fact["aliases"] or [fact["object"]]) if cond == "original" else [fact["replace_name"]]
                g, gn = greedy[ci].text, greedy[0].text
                samp, sampn = sampled[ci][0].text, sampled[0][0].text

                def labels(x, xn, rule, ctx_ans=ctx_ans, al=al, q=q):  # bound now: called in this iteration
                    if rule == "rouge":
                        m = sem.rouge_match(x, ctx_ans)
                        return dict(
                            match=m,
                            persuaded=m and not sem.rouge_match(xn, ctx_ans),
                            persuaded_code=m,
                            stubborn=(not m) and sem.rouge_match(x, xn, True),
                        )
                    m = sem.contains_answer(x, al)
                    return dict(
                        match=m,
                        persuaded=m and not sem.contains_answer(xn, al),
                        persuaded_code=m,
                        stubborn=(not m) and bool(eqm.equivalent(q, [x, xn])[0, 1]),
                    )

                c["labels_rouge"] = labels(g, gn, "rouge")
                c["labels_alias"] = labels(g, gn, "alias")
                c["labels_rouge_sampled"] = labels(samp, sampn, "rouge")
                ours = sem.rouge_l_f1(sem.clean_answer(g), ctx_ans)
                c["rouge_ours"] = ours
                c["rouge_nostem"] = _rouge_score(NOSTEM, sem.clean_answer(g), ctx_ans)
                c["rouge_stem"] = _rouge_score(STEM, sem.clean_answer(g), ctx_ans)
                c["rouge_stub_ours"] = sem.rouge_l_f1(sem.clean_answer(g), sem.clean_answer(gn))
                c["rouge_stub_stem"] = _rouge_score(STEM, sem.clean_answer(g), sem.clean_answer(gn))
            rec["conds"][cond] = c
        rec["seconds"] = time.time() - t0
        f.write(json.dumps(rec) + "\n")
        f.flush()
        print(fact["partition"], fact["id"], round(rec["seconds"], 1), flush=True)


def summarize(path):
    recs = [json.loads(line) for line in open(path)]
    print(
        "facts",
        len(recs),
        {p: sum(r["partition"] == p for r in recs) for p in ("static", "temporal", "disputable")},
    )
    ctx = [(r, c, r["conds"][c]) for r in recs for c in ("original", "counter")]
    allc = [(r, c, r["conds"][c]) for r in recs for c in ("none", "original", "counter")]
    print("instances", len(ctx))

    # CP: generated vs answer steps
    g = np.array([v["cp_generated"] for _, _, v in ctx])
    a = np.array([v["cp_answer"] for _, _, v in ctx])
    d = g - a
    print(
        f"CP generated mean {g.mean():.3f} answer {a.mean():.3f}; diff mean {d.mean():.3f} |diff| median {np.median(abs(d)):.3f} max {abs(d).max():.3f}; rel |diff| median {np.median(abs(d) / a):.3f}"
    )
    for p in ("static", "temporal", "disputable"):
        gg = [v["cp_generated"] for r, _, v in ctx if r["partition"] == p]
        aa = [v["cp_answer"] for r, _, v in ctx if r["partition"] == p]
        print(f"  {p}: CP generated {np.mean(gg):.3f} answer {np.mean(aa):.3f}")
    from scipy.stats import spearmanr

    print("  spearman generated vs answer", spearmanr(g, a).correlation)
    # zeros
    print(
        "float64 min no-ctx prob (generated)",
        min(v["min_prob_generated"] for _, _, v in ctx),
        "(answer)",
        min(v["min_prob_answer"] for _, _, v in ctx),
    )
    print(
        "max |CP drop - CP inf| (generated):",
        max(abs(v["cp_generated"] - v["cp_generated_drop"]) for _, _, v in ctx),
        "(answer):",
        max(abs(v["cp_answer"] - v["cp_answer_drop"]) for _, _, v in ctx),
    )
    f16inf = [v["cp_f16_inf"] for _, _, v in ctx]
    f16d = np.array([v["cp_f16_drop"] for _, _, v in ctx])
    print(
        f"float16 what-if: zero share of no-ctx vocab {np.mean([v['f16_zero_frac_noctx'] for _, _, v in ctx]):.3f}; CP inf in {sum(math.isinf(x) for x in f16inf)}/{len(f16inf)}; CP drop mean {f16d.mean():.3f} vs float64 {g.mean():.3f}; drop/float64 median {np.median(f16d / g):.3f} min {np.min(f16d / g):.3f}"
    )
    print(
        "authors' code CP (their clusters, drop) mean",
        np.mean([v["cp_authors_code"] for _, _, v in ctx]),
        "max |diff| vs ours",
        np.max(np.abs(np.array([v["cp_authors_code"] for _, _, v in ctx]) - g)),
    )
    # SE
    s_sum = np.array([v["se_mc_sum"] for _, _, v in allc])
    s_auth = np.array([v["se_mc_authors"] for _, _, v in allc])
    print(
        f"SE_mc(+5) sum {s_sum.mean():.3f} authors {s_auth.mean():.3f}; gap median {np.median(s_sum - s_auth):.2f} range {np.min(s_sum - s_auth):.2f}..{np.max(s_sum - s_auth):.2f}"
    )
    for cond in ("none", "ctx"):
        sel = [v for r, c, v in allc if (c == "none") == (cond == "none")]
        print(
            f"  {cond}: sum {np.mean([v['se_mc_sum'] for v in sel]):.3f} authors {np.mean([v['se_mc_authors'] for v in sel]):.3f}"
        )
    print(
        "  mean answer tokens",
        np.mean([np.mean(v["n_tokens"]) for _, _, v in allc]),
        "; samples with 20 answer tokens (no end of turn or newline: an empty answer under the released"
        " code's Llama / Mistral regex)",
        np.mean([np.mean(np.array(v["n_tokens"]) >= 20) for _, _, v in allc]),
    )
    # clustering
    print(
        "authors' pass: overlapping clusters in",
        sum(v["overlap"] for _, _, v in allc),
        "/",
        len(allc),
        "; n_clusters differ in",
        sum(v["n_clusters"] != v["n_clusters_authors_pass"] for _, _, v in allc),
        "; SE(authors form) differs in",
        sum(abs(v["se_mc_authors"] - v["se_mc_authors_authors_pass"]) > 1e-9 for _, _, v in allc),
        "; SE depends on set order (20 orders) in",
        sum(v["se_authors_hash_orders"] > 1 for _, _, v in allc),
    )
    print(
        "no-question embedding clusters differ in",
        sum(v["n_clusters"] != v["n_clusters_noq"] for _, _, v in allc),
        "/",
        len(allc),
        "mean clusters with q",
        np.mean([v["n_clusters"] for _, _, v in allc]),
        "without",
        np.mean([v["n_clusters_noq"] for _, _, v in allc]),
    )

    # labels
    def cnt(key, lab):
        return sum(v[key][lab] for _, _, v in ctx)

    for lab in ("match", "persuaded", "persuaded_code", "stubborn"):
        print(
            f"{lab}: rouge {cnt('labels_rouge', lab)} alias {cnt('labels_alias', lab)} rouge-sampled {cnt('labels_rouge_sampled', lab)}"
        )
    for p in ("static", "temporal", "disputable"):
        sel = [v for r, _, v in ctx if r["partition"] == p]
        if sel:
            pct = lambda key, lab: round(100 * sum(v[key][lab] for v in sel) / len(sel))  # noqa: E731, B023
            print(
                f"  {p} (%, rouge / alias): persuaded {pct('labels_rouge', 'persuaded')} / {pct('labels_alias', 'persuaded')}"
                f", stubborn {pct('labels_rouge', 'stubborn')} / {pct('labels_alias', 'stubborn')}"
                f", accuracy with context {pct('labels_rouge', 'match')} / {pct('labels_alias', 'match')}"
            )
    dis = sum(
        (v["labels_rouge"]["persuaded"], v["labels_rouge"]["stubborn"])
        != (v["labels_alias"]["persuaded"], v["labels_alias"]["stubborn"])
        for _, _, v in ctx
    )
    print("label pairs (persuaded, stubborn) differ rouge vs alias in", dis, "/", len(ctx))
    dis = sum(
        (v["labels_rouge"]["persuaded"], v["labels_rouge"]["stubborn"])
        != (v["labels_rouge_sampled"]["persuaded"], v["labels_rouge_sampled"]["stubborn"])
        for _, _, v in ctx
    )
    print("rouge labels greedy vs sampled answer differ in", dis)
    print(
        "our ROUGE == rouge_score no-stem:", max(abs(v["rouge_ours"] - v["rouge_nostem"]) for _, _, v in ctx)
    )
    st = sum((v["rouge_ours"] > 0.3) != (v["rouge_stem"] > 0.3) for _, _, v in ctx)
    st2 = sum((v["rouge_stub_ours"] > 0.3) != (v["rouge_stub_stem"] > 0.3) for _, _, v in ctx)
    print("stemming changes the context match in", st, "and the stubborn comparison in", st2, "of", len(ctx))
    for r, c, v in ctx:
        if v["labels_rouge"]["persuaded"] != v["labels_alias"]["persuaded"]:
            print(
                "   ",
                r["partition"],
                c,
                repr(v["greedy"][:70]),
                "|",
                r["object"] if c == "original" else r["replace_name"],
                v["labels_rouge"],
                v["labels_alias"],
            )


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument(
        "--data", help="folder with the three DynamicQA CSVs (ingested into a temporary warehouse)"
    )
    ap.add_argument("--limit", type=int, default=20, help="first N facts per partition")
    ap.add_argument("--threshold", type=float, default=0.890, help="embedding equivalence threshold")
    ap.add_argument("--out", default="dynamicqa_departures.jsonl", help="one JSON line per fact (appended)")
    ap.add_argument("--extra-path", help="a folder holding rouge_score + nltk (appended to sys.path)")
    ap.add_argument("--summarize", metavar="JSONL", help="only print the summary of an earlier --out")
    a = ap.parse_args()
    if a.summarize:
        return summarize(a.summarize)
    global STEM, NOSTEM
    if a.extra_path:
        sys.path.append(a.extra_path)
    try:
        from rouge_score import rouge_scorer

        STEM = rouge_scorer.RougeScorer(["rougeL"], use_stemmer=True)
        NOSTEM = rouge_scorer.RougeScorer(["rougeL"], use_stemmer=False)
    except ImportError:
        print("rouge_score not importable: the stemmer cross-check is skipped", file=sys.stderr)
    from ctxprior.dynamicqa.ingest import ingest_dynamicqa

    db = Path(tempfile.mkdtemp()) / "dq.duckdb"
    with open_store(str(db)) as wh:
        ingest_dynamicqa(wh, Path(a.data))
    measure(str(db), a.limit, a.out, a.threshold)
    summarize(a.out)


if __name__ == "__main__":
    main()
