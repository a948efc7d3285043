"""DynamicQA commands: `sample-dynamic`, `score-dynamic`, `analyze-dynamic` (`ingest dynamicqa` is in
commands/ingest.py)."""

from __future__ import annotations

import click

from .app import pass_app
from .runs import interrupted


@click.command("sample-dynamic")
@click.option("--dataset", default="dynamicqa", show_default=True, help="DynamicQA dataset name.")
@click.option(
    "--partition", default="static,temporal,disputable", show_default=True, help="Comma list of partitions."
)
@click.option(
    "--limit", type=int, default=None, help="First N facts per partition (file order). Default: all."
)
@pass_app
def sample_dynamic_cmd(app, dataset: str, partition: str, limit: int | None) -> None:
    """Store a sample for `ctxprior score --sample S`: the chosen facts with their original and
    counter-memory snippets as contexts. Reuses an identical existing sample. Prints the id last."""
    s = app.api(write=True).dynamic.sample(dataset, partition, limit)
    click.echo(
        f"sample {s['sample_id']}: dataset '{dataset}', {s['facts']} facts, {s['contexts']} contexts "
        "(original + counter per fact)"
    )
    click.echo(str(s["sample_id"]))


@click.command("score-dynamic")
@click.option("--dataset", default="dynamicqa", show_default=True, help="DynamicQA dataset name.")
@click.option(
    "--partition",
    default="static,temporal,disputable",
    show_default=True,
    help="Comma list of partitions to score.",
)
@click.option(
    "--limit", type=int, default=None, help="First N facts per partition (file order). Default: all."
)
@click.option(
    "--model",
    default="smollm2-135m",
    show_default=True,
    help="Model alias, GGUF file, local Hugging Face folder or cached hub id.",
)
@click.option(
    "--samples", type=int, default=10, show_default=True, help="Sampled answers per fact and condition."
)
@click.option("--temperature", type=float, default=0.5, show_default=True, help="Sampling temperature.")
@click.option("--max-new-tokens", type=int, default=20, show_default=True, help="Longest answer in tokens.")
@click.option(
    "--equivalence",
    default="embedding:minilm",
    show_default=True,
    help="Semantic equivalence: embedding:minilm (cosine >= calibrated threshold) or "
    "nli:MODEL (mutual entailment; a local folder or cached hub id).",
)
@click.option(
    "--threshold",
    type=float,
    default=None,
    help="Cosine threshold for embedding equivalence. Default: calibrated on this dataset.",
)
@click.option(
    "--chat-template",
    type=click.Choice(["auto", "none"]),
    default="auto",
    show_default=True,
    help="auto: wrap prompts in the tokenizer's chat template when it has one.",
)
@click.option(
    "--seed", type=int, default=0, show_default=True, help="Sampling seed (per fact: seed, fact id)."
)
@click.option("--device", default="auto", show_default=True, help="cpu | cuda | cuda:N | mps | auto.")
@click.option(
    "--se-form",
    type=click.Choice(["sum", "authors"]),
    default="sum",
    show_default=True,
    help="Per-sample log-likelihood in the Monte-Carlo SE: sum over the answer tokens (the "
    "paper's sequence probability) or authors (per-token mean, the released code's; "
    "with the +5 shift of analyze-dynamic it is the paper's Table 2 scale).",
)
@click.option(
    "--cp-tokens",
    type=click.Choice(["generated", "answer"]),
    default="generated",
    show_default=True,
    help="Steps each sample's mean token distribution (the CP input) averages: every generated "
    "step, end of sequence included (the released code), or the answer tokens only.",
)
@click.option(
    "--labels",
    type=click.Choice(["rouge", "alias"]),
    default="rouge",
    show_default=True,
    help="Greedy-answer matching for accuracy and persuaded / stubborn: rouge (the released code's "
    "ROUGE-L F1 > 0.3 with obj / replace_name / the no-context answer) or alias (whole-word "
    "aliases; stubborn by the equivalence test).",
)
@click.option(
    "--kl-zeros",
    type=click.Choice(["inf", "drop"]),
    default="inf",
    show_default=True,
    help="KL terms where the context-side distribution is positive and the no-context one is 0: "
    "inf (the true KL) or drop (left out, as the released code).",
)
@click.option(
    "--resume",
    "resume",
    type=int,
    default=None,
    metavar="RUN",
    help="Continue this run with its stored options (a rerun with the same options also continues).",
)
@pass_app
def score_dynamic_cmd(
    app,
    dataset,
    partition,
    limit,
    model,
    samples,
    temperature,
    max_new_tokens,
    equivalence,
    threshold,
    chat_template,
    seed,
    device,
    se_form,
    cp_tokens,
    labels,
    kl_zeros,
    resume,
) -> None:
    """Sample answers to each fact's question alone, with its original context and with its
    counter-memory context; store texts, log-probs, semantic clusters, semantic entropy, CP,
    accuracy and persuaded/stubborn labels. Prints the run id alone on the last line."""
    try:
        run = app.api(write=True).dynamic.score(
            dataset=dataset,
            partitions=partition,
            limit=limit,
            model=model,
            samples=samples,
            temperature=temperature,
            max_new_tokens=max_new_tokens,
            equivalence=equivalence,
            threshold=threshold,
            chat_template=chat_template,
            seed=seed,
            device=device,
            se_form=se_form,
            cp_tokens=cp_tokens,
            labels=labels,
            kl_zeros=kl_zeros,
            resume=resume,
            log=lambda m: click.echo(m, err=True),
        )
    except KeyboardInterrupt:
        interrupted("rerun the command (or `ctxprior runs resume RUN`) to continue")
    click.echo(
        f"run {run.id}: {run.status}, {run.units_done}/{run.units_total} facts; "
        f"mean CP {run.mean_cp or 0:.3f} nats, "
        f"mean SE with context {run.mean_se_with_context or 0:.3f} nats"
    )
    click.echo(str(run.id))


@click.command("analyze-dynamic")
@click.option(
    "--run",
    "runs",
    type=int,
    multiple=True,
    metavar="R",
    help="Dynamic run id; repeatable. Default: every dynamic run with scores.",
)
@pass_app
def analyze_dynamic_cmd(app, runs: tuple[int, ...]) -> None:
    """DynamicQA Tables 1-3 analogues per run (model): % persuaded / stubborn, accuracy with and
    without context, mean semantic entropy and CP per partition, and the OLS of CP on z-scored
    num_edits, s_pop, o_pop and SE without / with context. Stored in dynamicqa_summary and
    dynamicqa_regression, and printed."""
    click.echo(app.api(write=True).dynamic.analyze(list(runs) or None))


COMMANDS = [sample_dynamic_cmd, score_dynamic_cmd, analyze_dynamic_cmd]
