"""Prompts for fake entities: the paper authors' GPT-4 prompts, plus the relation's own context.

Du et al. (2024, App. C) "use GPT-4 (gpt-4-1106-preview, January 2024) to generate k fake
entities with the same entity class as the real ones". The authors' notebook
(measureLM ``preprocessing/YagoECQ/gpt_generate_entities.ipynb``) sent one chat request per entity
class: the system message ``PAPER_SYSTEM`` and a user message ``PAPER_CLASS_PROMPTS[cls]``
formatted with the number of names (1000), repeated until 1000 distinct names were collected,
then kept the lines matching ``^\\d+\\.\\s(.+)$``. The fakes of a relation were then sampled from
each class's pool in proportion to the relation's ``entity_types`` fractions
(``yago_generate_qec.ipynb``, section 5). The Place prompt is the one the notebook's output shows
it sent (its cell source has an older, shorter version).

``prompt_style``:
- ``paper``: exactly those messages (a class outside the paper's seven gets the same wording
  with the class name).
- ``relation`` (default): the paper's messages plus what this relation needs: its name, its open
  query form with the slot the fake fills, a few real examples to imitate but not repeat, and a
  request for a numbered list.
"""

from __future__ import annotations

import re

PAPER_SYSTEM = (
    "You are a creative assistant. Your purpose is to help the user come up with fictional names fitting "
    "the user's criteria. Give the user the requested number of names, no matter how long the response "
    "gets or how many names the user asks for. If the user asks for 1000 names, give 1000 names and do "
    "not split the list into multiple responses and give the full list of 1000 names. Do not repeat names."
)

PAPER_CLASS_PROMPTS = {
    "Organization": "Give me a list of {} names of organizations that are not real, but could sound plausibly real.",
    "Place": "Give me a list of {} names of places that are not real, but could sound plausibly real. Type of "
    "places should include countries, regions, towns, provinces/states, and natural regions. Avoid "
    "names that sound overly fictional or like they're from a video game.",
    "Event": "Give me a list of {} names of events that are not real, but could sound plausibly real.",
    "Person": "Give me a list of {} names of people who could exist but don't. Try to make them different from "
    "each other, e.g. avoid repeating surnames or names from the same category. Give me some from "
    "different cultures and time periods. Avoid any names of real people, and especially of famous "
    "people. Avoid any names that sound overly fantastical.",
    "Product": "Give me a list of {} names of products that are not real, but could sound plausibly real.",
    "CreativeWork": "Give me a list of {} total names of 20% books/poems, 20% songs, 20% art pieces, 20% theater "
    "shows, and 20% music pieces that are not real, but could sound plausibly real. Try to make "
    "them different from each other. Give me some from different cultures, time periods, genres, "
    "and mediums. Avoid any names of real works, and especially of famous works. Avoid overly "
    "fantastical sounding names.",
    "Taxon": "Give me a list of {} biological taxon names that are not real, but could sound plausibly real. Give "
    "some with a fake but plausible-sounding genus and some with just the species name.",
}
GENERIC_CLASS_PROMPT = (
    "Give me a list of {n} names of {what} that are not real, but could sound plausibly real."
)
PROMPT_STYLES = ("relation", "paper")
LIST_INSTRUCTION = "Answer with a numbered list, one name per line, and nothing else."


def short_class(class_name: str | None) -> str | None:
    """'http://schema.org/Person' -> 'Person'; None stays None."""
    if not class_name:
        return None
    return class_name.rstrip("/").replace("#", "/").rsplit("/", 1)[-1] or class_name


def plural_words(cls: str) -> str:
    """'Country' -> 'countries', 'FictionalEntity' -> 'fictional entities' (naive English plural)."""
    words = re.sub(r"(?<=[a-z0-9])(?=[A-Z])", " ", cls.replace("_", " ")).lower().split()
    if not words:
        return "entities"
    w = words[-1]
    if re.search(r"[^aeiou]y$", w):
        w = w[:-1] + "ies"
    elif re.search(r"(s|x|z|ch|sh)$", w):
        w += "es"
    else:
        w += "s"
    return " ".join(words[:-1] + [w])


def class_prompt(class_name: str | None, n: int) -> str:
    """The paper's user prompt for this class (its wording, with the class's plural, for others)."""
    cls = short_class(class_name)
    if cls in PAPER_CLASS_PROMPTS:
        return PAPER_CLASS_PROMPTS[cls].format(n)
    return GENERIC_CLASS_PROMPT.format(n=n, what=plural_words(cls) if cls else "entities")


def _slot_form(query_form: str | None) -> str | None:
    if not query_form:
        return None
    return " ".join(query_form.replace("{entity}", "X").replace("{answer}", "Y").split())


def build_messages(
    class_name: str | None,
    n: int,
    style: str = "relation",
    relation: str | None = None,
    query_form: str | None = None,
    examples: list[str] | tuple = (),
) -> list[dict]:
    """Chat messages asking for ``n`` fake names of ``class_name`` (see the module docstring)."""
    user = class_prompt(class_name, n)
    if style == "relation":
        extra = []
        form = _slot_form(query_form)
        if relation:
            extra.append(
                f"The names are for the relation '{relation}'"
                + (f', in questions such as "{form}" (X is the name).' if form else ".")
            )
        if examples:
            extra.append(
                f"Real examples of such names: {'; '.join(examples)}. "
                "Do not use these or any other real names."
            )
        extra.append(LIST_INSTRUCTION)
        user = user + "\n" + "\n".join(extra)
    return [{"role": "system", "content": PAPER_SYSTEM}, {"role": "user", "content": user}]
