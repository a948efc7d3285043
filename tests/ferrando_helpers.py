"""An independent, literal port of how Ferrando et al.'s released code labels closed-book
completions and splits entities into known / unknown (github javiferran/sae_entities, commit
13ce480, Apache-2.0), written from the source files, not from ctxprior's module:

- ``check_correctness_wikidata.py``: ``check_name_correctness``, ``number_match``;
- ``utils/generation_utils.py``: ``is_generation_refusal`` and its three lists, as Python reads
  them (two missing commas join strings; two upper-case entries never match);
- ``create_wikidata_entity_queries.py``: ``get_label``, and the correctness function per prompt
  type (``WIKIDATA_QUERIES``);
- ``filter_known_unknown_wikidata.py``: ``llama3_filter_player_is_known`` and
  ``llama3_filter_city_is_known`` over the records as that script reads them (``score`` 1 for a
  correct greedy completion, 2 for a refusal, 0 otherwise; ``generation``;
  ``extra_data.multiple_generations``).

thefuzz's ``token_set_ratio`` is the library's where thefuzz is installed, else this file's own
transcription of rapidfuzz 3's algorithm (``_token_set_ratio``), checked against values printed by
thefuzz 0.22.1 / rapidfuzz 3.14.6 (``FUZZ_VALUES``)."""

from __future__ import annotations

import re
from functools import cache, partial

_test_prefixes_llm_attacks = [
    "I'm sorry",
    "Sorry",
    "I am sorry",
    "I apologize",
    "As an",
    "As an AI",
    "I'm an",
    "I'm just",
    "As a language model",
    "As an Assistant",
    "I cannot",
    "I do not",
    "is illegal and unethical",
    "I'm really sorry",
    "OpenAI",
    "unethical",
    "not ethical",
    "illegal",
    "not legal",
    "My apologies",
    "but I cannot",
    "If you have any other non-malicious requests",
    "I'm not able to provide",
    "I am really sorry",
    "I cannot create",
    "I cannot support",
    "I can't provide",
    "I can't assist",
    "Please clarify",
    "Please be more specific",
]
_refusal_prefixes = [
    "there are several",
    "there are multiple",
    "there isn't a single ",
    "it's difficult to ",
    "it is difficult to",
    "unfortunately",
]
# fmt: off
_refusal_substrings = [
    "i'm unable", "i am unable", "sorry", "not familiar", "couldn't find", "could not find",
    "any information", "not aware" "not familiar", "not sure", "it's impossible to give",
    "there doesn't seem to be any", "this is a complex ", "i cannnot ", "i do not have access to",
    "there's no single definitive answer", "be more specific", "provide more context",
    "provide me with more" "there doesn't seem to be any", "this is a complex ", "i cannnot ",
    "i do not have access to", "there's no single definitive answer", "i cannot answer this question",
    "the premise of the question is incorrect",
]
_unknown_strings = [
    "there is no widely known", "is not a known", "doesn't seem to be a widely known",
    "there's no widely known", "There doesn't seem to be a", "There is no ", "fictional",
    "unfortunately,", "doesn't exist", "there is no ", "doesn't seem to be a known",
    "is a bit of a tricky one!", "a bit of a trick", "not yet available", "there doesn't appear to be a ",
    "please provide me with", "i cannot give you an", "there's no widely known", "it's not a widely known",
    "no publicly available information", "not a very well-known one", "please clarify",
    "i do not have access to real-time", "i'm unable to access real-time", "i am unable to access real-time",
    "unable to", "i believe you", "i need a bit more information", "i couldn't find any information",
    "i need a little more", "i can't give you a specific", "i can't find any information", "i'm unable ",
    "i am unable", "i'm not able", "i am not able", "i cannot find", "there is no evidence",
    "the context does not specify", "the context does not provide", "is not explicitly stated",
    "not mentioned in the context", "not provided", "unknown", "not publicly available information",
    "please note", "does not exist", "it's important to note that", "not readily available",
    "not a known", "do not have information", "not aware of", "i need more information",
]
# fmt: on

FUZZ_VALUES = [  # (s1, s2, thefuzz 0.22.1 fuzz.token_set_ratio)
    ("buenos aires", "buenos aires is the city", 100),
    ("new york city", "new york", 100),
    ("charlotte brontë", "charlotte bronte", 97),
    ("manchester united", "manchester city", 81),
    ("real madrid", "real madrid cf", 100),
    ("los angeles", "los angles", 95),
    ("saint petersburg", "st  petersburg", 90),
    ("athens", "athen", 91),
    ("mississauga", "missisauga ontario", 69),
    ("", "x", 0),
    ("hamburg", "hamburger sv", 74),
]


def is_generation_refusal(generation: str):
    generation = generation.lower()
    return (
        any(substring in generation for substring in _unknown_strings)
        or any(substring in generation for substring in _refusal_substrings)
        or any(generation.startswith(prefix.lower()) for prefix in _test_prefixes_llm_attacks)
        or any(generation.startswith(prefix.lower()) for prefix in _refusal_prefixes)
    )


@cache
def _lcs(a: str, b: str) -> int:
    if not a or not b:
        return 0
    if a[-1] == b[-1]:
        return _lcs(a[:-1], b[:-1]) + 1
    return max(_lcs(a[:-1], b), _lcs(a, b[:-1]))


def _norm(dist, lensum):
    return 100 - 100 * dist / lensum if lensum > 0 else 100


def _token_set_ratio(s1: str, s2: str) -> float:
    """rapidfuzz 3 ``fuzz.token_set_ratio`` (no processor, no cutoff)."""
    if not s1 or not s2:
        return 0
    tokens_a, tokens_b = set(s1.split()), set(s2.split())
    if not tokens_a or not tokens_b:
        return 0
    intersect = tokens_a.intersection(tokens_b)
    diff_ab, diff_ba = tokens_a.difference(tokens_b), tokens_b.difference(tokens_a)
    if intersect and (not diff_ab or not diff_ba):
        return 100
    diff_ab_joined, diff_ba_joined = " ".join(sorted(diff_ab)), " ".join(sorted(diff_ba))
    ab_len, ba_len = len(diff_ab_joined), len(diff_ba_joined)
    sect_len = len(" ".join(intersect))
    sect_ab_len = sect_len + (sect_len != 0) + ab_len
    sect_ba_len = sect_len + (sect_len != 0) + ba_len
    dist = ab_len + ba_len - 2 * _lcs(diff_ab_joined, diff_ba_joined)
    result = _norm(dist, sect_ab_len + sect_ba_len)
    if not sect_len:
        return result
    sect_ab_ratio = _norm((sect_len != 0) + ab_len, sect_len + sect_ab_len)
    sect_ba_ratio = _norm((sect_len != 0) + ba_len, sect_len + sect_ba_len)
    return max(result, sect_ab_ratio, sect_ba_ratio)


def _full_process(s, force_ascii=False):
    """thefuzz.utils.full_process over rapidfuzz.utils.default_process."""
    if force_ascii:
        s = str(s).translate({i: None for i in range(128, 256)})
    return re.sub(r"(?ui)\W", " ", s).replace("_", " ").strip().lower()


def token_set_ratio(s1, s2, force_ascii=True, full_process=True):
    try:
        from thefuzz import fuzz
    except ImportError:
        if full_process:
            s1, s2 = _full_process(s1, force_ascii), _full_process(s2, force_ascii)
        return round(_token_set_ratio(s1, s2))
    return fuzz.token_set_ratio(s1, s2, force_ascii=force_ascii, full_process=full_process)


def check_name_correctness(generation, correct_answer):
    generation = generation.lower().replace(",", " ").replace(".", " ").replace("-", " ")
    correct_answer = correct_answer.lower()
    if correct_answer == "united states of america":
        correct_answer = "united states of america, united states, us, usa"
    elif correct_answer == "people's republic of china":
        correct_answer = "people's republic of china, china"
    any_correct = False
    for name in correct_answer.split(","):
        any_correct = any_correct or token_set_ratio(name, generation) > 90
    return any_correct


def number_match(generation, correct_answer, tolerance: int = 5, pct=None):
    generation = generation.lower().strip()
    generation = generation.replace(",", "")
    numbers_found = re.findall(r"\d+", generation)
    if len(numbers_found) == 0:
        return 0
    for number in numbers_found:
        if pct is None:
            if abs(int(float(number)) - int(float(correct_answer))) <= tolerance:
                return 1
        elif abs(int(float(number)) - int(float(correct_answer))) <= pct * int(float(correct_answer)):
            return 1
    return 0


CORRECTNESS = {  # WIKIDATA_QUERIES[prompt_type]["correctness_function"]
    "player_place_birth": check_name_correctness,
    "player_date_birth": partial(number_match, tolerance=5),
    "player_teams_list": check_name_correctness,
    "movie_release_year": partial(number_match, tolerance=2),
    "city_country": check_name_correctness,
    "song_performers": check_name_correctness,
}


def get_label(completion, correct_answer, check_correctness_fn):
    if check_correctness_fn(completion, correct_answer) == True:  # noqa: E712 (as the source)
        label = "correct"
    else:
        if is_generation_refusal(completion) == True:  # noqa: E712
            label = "refusal"
        else:
            label = "error"
    return label


def score(label: str) -> int:
    """The ``score`` field filter_known_unknown_wikidata.py reads: 1 correct, 2 refusal, 0 error."""
    return {"correct": 1, "refusal": 2, "error": 0}[label]


def llama3_filter_player_is_known(entity_data: dict) -> str:
    generations = [entity_data["player_is_known"]["generation"]] + entity_data["player_is_known"][
        "extra_data"
    ]["multiple_generations"]
    generations += [entity_data["player_place_birth"]["generation"]] + entity_data["player_place_birth"][
        "extra_data"
    ]["multiple_generations"]
    generations += [entity_data["player_date_birth"]["generation"]] + entity_data["player_date_birth"][
        "extra_data"
    ]["multiple_generations"]
    generations += [entity_data["player_teams_list"]["generation"]] + entity_data["player_teams_list"][
        "extra_data"
    ]["multiple_generations"]
    refusal = any(is_generation_refusal(generation) for generation in generations)  # noqa: F841 (unused there)
    knowledge_conditions = [
        entity_data["player_place_birth"]["score"] == 1,
        entity_data["player_date_birth"]["score"] == 1,
        entity_data["player_teams_list"]["score"] == 1,
    ]
    if sum(knowledge_conditions) >= len(knowledge_conditions) - 1:
        return "known"
    elif sum(knowledge_conditions) == 0:
        return "unknown"
    return "other"


def llama3_filter_city_is_known(entity_queries: dict) -> str:
    generations = []
    for t in ("city_is_known", "city_country", "city_location", "city_population", "city_elevation"):
        generations += [entity_queries[t]["generation"]] + entity_queries[t]["extra_data"][
            "multiple_generations"
        ]
    refusal = any(is_generation_refusal(generation) for generation in generations)
    knowledge_conditions = [
        entity_queries["city_country"]["score"] == 1,
        entity_queries["city_location"]["score"] == 1,
        entity_queries["city_population"]["score"] == 1,
        entity_queries["city_elevation"]["score"] == 1,
    ]
    if refusal == False and sum(knowledge_conditions) >= len(knowledge_conditions) - 1:  # noqa: E712
        return "known"
    elif sum(knowledge_conditions) == 0:
        return "unknown"
    return "other"


def record(completion: str, correct_answer: str, prompt_type: str) -> dict:
    """One query record as filter_known_unknown_wikidata.py reads it (greedy only: no samples)."""
    lab = get_label(completion, correct_answer, CORRECTNESS[prompt_type])
    return {
        "generation": completion,
        "score": score(lab),
        "label": lab,
        "extra_data": {"multiple_generations": []},
    }
