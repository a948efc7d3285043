"""Generation labels under the ``prefix`` rule (ORIGINAL / CONTEXT / OTHER): whitespace and newlines
around a generation never change its label (the generation is stripped before its first line is
compared). The default rule, ``recall``, and ``exact``: tests/test_outcomes.py."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from ctxprior.scoring.outcomes import label

pytestmark = pytest.mark.quick  # the inner loop (DEVELOPERS.md)


def label_generation(text: str, query_type: str, true: str, ctx: str) -> str | None:
    return label(text, "prefix", query_type, true, ctx)


WS = st.text(alphabet=" \t\n\r", max_size=6)
ANSWERS = st.sampled_from(["Paris", "Rome", "Buenos Aires", "New York City", "São Paulo"])


def test_leading_newline_is_not_other():
    # the defect: "\nParis" was labelled on its (empty) first line and became OTHER
    assert label_generation("\nParis", "open", "Paris", "Rome") == "ORIGINAL"
    assert label_generation("\n\n Rome.\nQ: next", "open", "Paris", "Rome") == "CONTEXT"
    assert label_generation("\nYes", "closed", "Paris", "Rome") == "ORIGINAL"
    assert label_generation("\r\n No, it is not", "closed", "Paris", "Rome") == "CONTEXT"
    assert label_generation("\n", "open", "Paris", "Rome") == "OTHER"
    assert label_generation("", "closed", "Paris", "Rome") == "OTHER"


def test_only_the_first_nonblank_line_counts():
    assert label_generation("Berlin\nParis", "open", "Paris", "Rome") == "OTHER"
    assert label_generation("\nMaybe\nYes", "closed", "Paris", "Rome") == "OTHER"


@given(
    pre=WS,
    post=WS,
    true=ANSWERS,
    ctx=ANSWERS,
    tail=st.sampled_from(["", ".", ", of course", " is the answer"]),
)
def test_whitespace_around_an_open_answer_never_changes_the_label(pre, post, true, ctx, tail):
    body = f"{true}{tail}"
    assert (
        label_generation(pre + body + post, "open", true, ctx)
        == label_generation(body, "open", true, ctx)
        == "ORIGINAL"
    )
    if (
        ctx.casefold() != true.casefold()
        and not true.casefold().startswith(ctx.casefold())
        and not ctx.casefold().startswith(true.casefold())
    ):
        body = f"{ctx}{tail}"
        assert label_generation(pre + body + post, "open", true, ctx) == "CONTEXT"


@given(pre=WS, post=WS, word=st.sampled_from(["Yes", "yes.", "YES,", "No", "no.", "Nope", "Maybe"]))
def test_whitespace_around_a_closed_answer_never_changes_the_label(pre, post, word):
    expect = {"yes": "ORIGINAL", "no": "CONTEXT"}.get(word.lower().strip(".,"), "OTHER")
    assert label_generation(pre + word + post, "closed", "Paris", "Rome") == expect
