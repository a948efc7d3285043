"""Prompt formats: how a (context, query) pair becomes the string the model reads.

- ``raw`` (the paper, the default): ``context + query``; the no-context prior prompt is ``query``.
- ``chat``: ``context + query`` is the content of ONE user turn, rendered with the model's own chat
  template (``tokenizer.apply_chat_template``) and its generation prompt (the assistant header),
  so the next token is the first token of the assistant's answer. The prior prompt is the query
  alone in the user turn. ctxprior gives no system message: a template that inserts a default one
  when none is given (SmolLM2's "You are a helpful AI assistant named SmolLM...") keeps it, as in
  the model's ordinary use; the stored rendering shows it.

The template is rendered ONCE per format with a placeholder content, giving a head (system turn,
user header) and a tail (end of turn, assistant header); a prompt is then ``head + context +
query + tail``, so the template header and the context come before the entity and prompts still
share their key/value prefix. A template that changes the content it is given (e.g. Llama 3's
``| trim``) is detected by a probe and rendered prompt by prompt instead (same strings, slower).
A leading BOS the template writes is dropped when the tokenizer adds one itself (no double BOS).
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable
from dataclasses import dataclass

from ..errors import UserError

FORMATS = ("raw", "chat")
PLACEHOLDER = "{context}{query}"
_MARK = "\x00ctxprior-content\x00"
_PROBE = " \n ctxprior probe\t\n "


def chat_template_of(tokenizer, what: str = "--prompt-format chat") -> str:
    """The tokenizer's chat template string; a one-line UserError when it has none."""
    tmpl = getattr(tokenizer, "chat_template", None) if tokenizer is not None else None
    if isinstance(tmpl, dict):  # several named templates: the default one
        tmpl = tmpl.get("default")
    if not tmpl:
        raise UserError(f"{what}: the model's tokenizer has no chat template (use --prompt-format raw)")
    return tmpl


def render_chat(tokenizer, content: str) -> str:
    """``content`` as the one user turn, with the template's generation prompt (no tokenizing)."""
    return tokenizer.apply_chat_template(
        [{"role": "user", "content": content}], tokenize=False, add_generation_prompt=True
    )


def _adds_bos(tokenizer) -> bool:
    bos = getattr(tokenizer, "bos_token_id", None)
    if bos is None:
        return False
    ids = tokenizer("x", add_special_tokens=True)["input_ids"]
    plain = tokenizer("x", add_special_tokens=False)["input_ids"]
    return bool(ids) and ids[0] == bos and (not plain or plain[0] != bos)


@dataclass(frozen=True)
class PromptFormat:
    """Renders (context, query) pairs; ``template`` (the rendering of ``{context}{query}``) and
    ``template_sha256`` (of the chat template's source) are stored with the run."""

    name: str = "raw"
    head: str = ""
    tail: str = ""
    template: str | None = None
    template_sha256: str | None = None
    slow: Callable[[str], str] | None = None  # per-prompt rendering (a template that edits content)

    def __call__(self, context: str, query: str) -> str:
        if self.slow is not None:
            return self.slow(context + query)
        return self.head + context + query + self.tail

    def prior(self, query: str) -> str:
        """The no-context prompt: the query alone (in the user turn for chat)."""
        return self(context="", query=query)


def prompt_format(tokenizer, name: str = "raw") -> PromptFormat:
    """The ``raw`` or ``chat`` format for this tokenizer (UserError: unknown name, no template)."""
    if name not in FORMATS:
        raise UserError(f"--prompt-format {name}: use raw or chat")
    if name == "raw":
        return PromptFormat()
    source = chat_template_of(tokenizer)
    strip = tokenizer.bos_token if _adds_bos(tokenizer) else ""

    def render(content: str) -> str:
        text = render_chat(tokenizer, content)
        return text[len(strip) :] if strip and text.startswith(strip) else text

    try:
        shape = render(_MARK)
    except Exception as e:  # a template that cannot render a lone user turn
        raise UserError(
            f"--prompt-format chat: the chat template fails on a user turn ({type(e).__name__}: "
            f"{e})".splitlines()[0]
        ) from None
    if shape.count(_MARK) != 1:
        raise UserError("--prompt-format chat: the chat template does not render the user message once")
    head, tail = shape.split(_MARK)
    exact = render(_PROBE) == head + _PROBE + tail
    return PromptFormat(
        "chat",
        head,
        tail,
        head + PLACEHOLDER + tail,
        hashlib.sha256(source.encode()).hexdigest(),
        None if exact else render,
    )


def format_for(tokenizer, config) -> PromptFormat:
    """The format a ScoreConfig asks for; its stored rendering must match this tokenizer's."""
    fmt = prompt_format(tokenizer, getattr(config, "prompt_format", "raw"))
    stored = getattr(config, "prompt_template", None)
    if stored is not None and stored != fmt.template:
        raise UserError(
            "--prompt-format chat: the model's chat template renders differently from the "
            "run's stored one (a different tokenizer); start a new run"
        )
    return fmt
