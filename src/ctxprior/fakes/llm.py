"""Chat models that write fake names: a local Hugging Face model, or an OpenAI-compatible endpoint.

Both take chat messages and a seed and return the answer text:
- ``LocalChat``: ``ctxprior.scoring.models.load_model`` (the bundled ``smollm2-135m``, a hub id or a
  folder) with its tokenizer's chat template; ``torch.manual_seed(seed)`` before each sampled
  generation, so the same seed gives the same text on the same machine and library versions. It
  stops at ``16 * names + 48`` new tokens, or as soon as the answer holds enough list lines.
- ``OpenAIChat``: ``POST {base_url}/chat/completions`` (OpenAI, vLLM, Ollama, ...) with the
  standard library; the seed is sent as ``seed`` (endpoints that honour it are reproducible).
  A timeout bounds every request; 429 and 5xx answers and network errors are retried with
  exponential backoff (``Retry-After`` honoured, capped at 60 s). The API key is read from an
  environment variable and sent only in the Authorization header; ``user:password@`` in the base
  URL is sent as HTTP basic auth instead, and a query string is kept after ``/chat/completions``.
  Neither secret is ever printed, stored or exported, whatever the endpoint answers: an answer
  line that holds one is dropped (a server that echoes what it was sent), and the reported model
  and fingerprint have it masked.
"""

from __future__ import annotations

import base64
import json
import os
import sys
import time
import urllib.error
import urllib.request
from urllib.parse import parse_qsl, unquote, urlsplit, urlunsplit

from ..errors import UserError
from .parse import parse_names

OPENAI_PREFIX = "openai:"
OPENAI_BASE_URL = "https://api.openai.com/v1"
DEFAULT_KEY_ENV = "OPENAI_API_KEY"
MAX_BACKOFF = 60.0


class LocalChat:
    """A local causal LM with a chat template (loaded once)."""

    def __init__(self, model: str, temperature: float = 1.0, top_p: float = 1.0, device: str = "auto"):
        from ..scoring.models import load_model

        self.lm = load_model(model, device=device)
        if not getattr(self.lm.tokenizer, "chat_template", None):
            raise UserError(
                f"--model {model}: its tokenizer has no chat template; use an instruction-tuned (chat) model"
            )
        self.model, self.temperature, self.top_p = model, temperature, top_p
        self.revision = self.lm.revision
        self.endpoint = None

    def max_new_tokens(self, n_names: int) -> int:
        """Room for ``n_names`` list lines (~16 tokens each) plus a preamble, at most 2048."""
        return min(2048, 16 * n_names + 48)

    def _enough(self, n_names: int):
        """Stop generating once a finished line completes ``n_names`` parseable names."""
        tok = self.lm.tokenizer

        def enough(tokens) -> bool:  # tokens [1, t] generated so far
            text = tok.decode(tokens[0], skip_special_tokens=True)
            return text.endswith("\n") and len(parse_names(text)) >= n_names

        return enough

    def complete(self, messages: list[dict], seed: int, n_names: int) -> str:
        """The model's answer to ``messages`` (sampled with ``seed``; greedy at temperature 0), on
        the one generation path (``scoring.generate``). Sampling keeps the top 50 tokens before
        top-p: what transformers' ``generate`` did here by default, so fakes stay the same."""
        from ..scoring.generate import Sampling, cut, generate

        tok = self.lm.tokenizer
        ids = tok.apply_chat_template(messages, add_generation_prompt=True, return_dict=True)["input_ids"]
        sampling = Sampling(temperature=max(self.temperature, 0.0), top_p=self.top_p, top_k=50, seed=seed)
        g = generate(self.lm, [ids], self.max_new_tokens(n_names), sampling, until=self._enough(n_names))
        return tok.decode(cut(g.tokens[0].tolist(), g.stop), skip_special_tokens=True)


SECRET_PARAM = ("key", "token", "secret", "pass", "auth", "sig")  # query parameters that hold one


def public_url(url: str) -> str:
    """``url`` without credentials, query or fragment (what may be stored and printed)."""
    p = urlsplit(url)
    host = p.hostname or ""
    if p.port:
        host = f"{host}:{p.port}"
    return urlunsplit((p.scheme, host, p.path.rstrip("/"), "", ""))


def mask_secrets(text: str, secrets: list[str], window: int = 12) -> str:
    """``text`` with every secret, and every ``window`` characters of one (an echo cut short),
    replaced by ``***``."""
    hide = [False] * len(text)
    for secret in secrets:
        n = min(window, len(secret))
        for piece in {secret[i : i + n] for i in range(len(secret) - n + 1)}:
            at = text.find(piece)
            while at != -1:
                hide[at : at + n] = [True] * n
                at = text.find(piece, at + 1)
    if not any(hide):
        return text
    out = [
        c if not h else ("***" if i == 0 or not hide[i - 1] else "")
        for i, (c, h) in enumerate(zip(text, hide))
    ]
    return "".join(out)


def chat_url(base: str) -> tuple[str, str | None, list[str]]:
    """``base`` (an OpenAI-compatible base URL) -> (the chat completions URL, without credentials,
    query kept; the basic-auth header from ``user:password@``, or None; the secrets it holds)."""
    p = urlsplit(base)
    netloc = p.netloc.rpartition("@")[2]
    url = urlunsplit((p.scheme, netloc, p.path.rstrip("/") + "/chat/completions", p.query, ""))
    secrets = [v for k, v in parse_qsl(p.query) if any(w in k.lower() for w in SECRET_PARAM) and len(v) >= 8]
    if "@" not in p.netloc:
        return url, None, secrets
    raw = p.netloc.rpartition("@")[0]
    user, _, pw = raw.partition(":")
    token = base64.b64encode(f"{unquote(user)}:{unquote(pw)}".encode()).decode("ascii")
    return url, f"Basic {token}", secrets + [pw, unquote(pw), token]  # the user name is no secret


def read_api_key(env_name: str | None, base_url: str) -> str | None:
    """The key from ``env_name``; a missing variable is an error when it was named explicitly or
    the endpoint is OpenAI's (local servers such as vLLM or Ollama need no key). A base URL with
    ``user:password@`` authenticates with those: no key is read, and naming one is an error."""
    if "@" in urlsplit(base_url).netloc:
        if env_name:
            raise UserError(
                f"--base-url {public_url(base_url)} carries a user name and password and "
                f"--api-key-env {env_name} names a key; give one of them"
            )
        return None
    name = env_name or DEFAULT_KEY_ENV
    key = os.environ.get(name) or None
    if key is None and (env_name or urlsplit(base_url).hostname == "api.openai.com"):
        raise UserError(
            f"environment variable {name} is not set; export your API key there "
            "(or name another variable with --api-key-env)"
        )
    return key


class OpenAIChat:
    """An OpenAI-compatible chat completions endpoint."""

    def __init__(
        self,
        model: str,
        base_url: str | None = None,
        api_key: str | None = None,
        temperature: float = 1.0,
        top_p: float = 1.0,
        timeout: float = 120.0,
        retries: int = 4,
        backoff: float = 1.0,
    ):
        base = (base_url or OPENAI_BASE_URL).rstrip("/")
        p = urlsplit(base)
        if p.scheme not in ("http", "https") or not p.hostname:
            raise UserError(
                f"--base-url {public_url(base)}: expected an http(s) URL such as http://localhost:8000/v1"
            )
        self.url, basic, secrets = chat_url(base)
        if basic and api_key:
            raise UserError(
                f"--base-url {public_url(base)} carries a user name and password, and an API "
                "key is given too; give one of them"
            )
        self.model = model
        self._auth = f"Bearer {api_key}" if api_key else basic
        # longest first, so a secret that holds another is masked whole
        self._secrets = sorted({x for x in [api_key, *secrets] if x}, key=len, reverse=True)
        self.endpoint = public_url(base)
        self.temperature, self.top_p = temperature, top_p
        self.timeout, self.retries, self.backoff = timeout, retries, backoff
        self.revision: str | None = None
        self.dropped = 0  # answer lines dropped because they held a secret

    def _mask(self, text: str) -> str:
        return mask_secrets(text, self._secrets)

    def _safe(self, text: str) -> str:
        """One line, without the key (some servers echo what they were sent)."""
        return self._mask(" ".join(str(text).split()))

    def _without_secrets(self, content: str) -> str:
        """``content`` less the lines that hold a secret (a server that echoes what it was sent)."""
        lines = content.split("\n")
        kept = [line for line in lines if self._mask(line) == line]
        if len(kept) < len(lines):
            if not self.dropped:
                print(
                    f"warning: {self.endpoint} echoed the API key or password in its answer; "
                    "those lines were dropped",
                    file=sys.stderr,
                )
            self.dropped += len(lines) - len(kept)
        return "\n".join(kept)

    def _request(self, body: dict) -> urllib.request.Request:
        headers = {"Content-Type": "application/json", "Accept": "application/json"}
        if self._auth:
            headers["Authorization"] = self._auth
        return urllib.request.Request(
            self.url, data=json.dumps(body).encode("utf-8"), headers=headers, method="POST"
        )

    def _wait(self, attempt: int, retry_after: str | None) -> None:
        try:
            delay = float(retry_after) if retry_after is not None else self.backoff * 2**attempt
        except ValueError:
            delay = self.backoff * 2**attempt
        time.sleep(min(max(delay, 0.0), MAX_BACKOFF))

    def _http_error(self, e: urllib.error.HTTPError) -> UserError:
        try:
            detail = json.loads(e.read().decode("utf-8", "replace"))["error"]["message"]
        except Exception:
            detail = e.reason
        hint = {
            401: "check the API key",
            403: "check the API key and its permissions",
            404: "check --base-url (it usually ends in /v1) and the model name",
        }.get(e.code, "")
        return UserError(
            self._safe(
                f"{self.endpoint}: HTTP {e.code} from the chat endpoint: {detail}"
                + (f"; {hint}" if hint else "")
            )
        )

    def _post(self, body: dict) -> bytes:
        """POST with retries for 429 / 5xx / network errors; the raw response body."""
        last = ""
        for attempt in range(self.retries + 1):
            try:
                with urllib.request.urlopen(self._request(body), timeout=self.timeout) as r:
                    return r.read()
            except urllib.error.HTTPError as e:
                if e.code != 429 and e.code < 500:
                    raise self._http_error(e) from None
                last, retry_after = f"HTTP {e.code}", e.headers.get("Retry-After")
            except (urllib.error.URLError, TimeoutError, ConnectionError, OSError) as e:
                reason = getattr(e, "reason", e)
                timed_out = isinstance(reason, TimeoutError) or "timed out" in str(reason)
                last = f"no answer within {self.timeout:g} s" if timed_out else f"cannot connect ({reason})"
                retry_after = None
            if attempt < self.retries:
                self._wait(attempt, retry_after)
        raise UserError(
            self._safe(
                f"{self.endpoint}: {last} after {self.retries + 1} attempt(s); "
                "check the server, or raise --timeout / --retries"
            )
        )

    def complete(self, messages: list[dict], seed: int, n_names: int) -> str:
        """The endpoint's answer text (``choices[0].message.content``)."""
        body = {
            "model": self.model,
            "messages": messages,
            "temperature": self.temperature,
            "top_p": self.top_p,
            "seed": seed,
        }
        raw = self._post(body)
        try:
            data = json.loads(raw.decode("utf-8"))
            content = data["choices"][0]["message"]["content"]
            if not isinstance(content, str):
                raise TypeError("content is not text")
        except Exception:
            start = self._safe(raw[:60].decode("utf-8", "replace"))
            raise UserError(
                f"{self.endpoint}: the answer is not an OpenAI chat completion (starts with "
                f"{start!r}); is --base-url an OpenAI-compatible endpoint?"
            ) from None
        reported = [str(data[k]) for k in ("model", "system_fingerprint") if data.get(k)]
        if reported:
            self.revision = self._safe(" ".join(reported))
        return self._without_secrets(content)


def make_chat(
    model: str,
    base_url: str | None = None,
    api_key_env: str | None = None,
    temperature: float = 1.0,
    top_p: float = 1.0,
    timeout: float = 120.0,
    retries: int = 4,
    backoff: float = 1.0,
):
    """``openai:MODEL`` -> OpenAIChat (key from the environment); anything else -> LocalChat."""
    from ..options import check_options
    from .options import GENERATE_OPTIONS

    values = {"temperature": temperature, "top_p": top_p, "timeout": timeout, "retries": retries}
    check_options(GENERATE_OPTIONS, values)  # the declared checks (fakes/options.py)
    if model.startswith(OPENAI_PREFIX):
        name = model[len(OPENAI_PREFIX) :]
        if not name:
            raise UserError("--model openai: give the model after the colon, e.g. openai:gpt-4-1106-preview")
        base = base_url or OPENAI_BASE_URL
        return OpenAIChat(
            name, base, read_api_key(api_key_env, base), temperature, top_p, timeout, retries, backoff
        )
    if base_url:
        raise UserError(f"--base-url is for openai:MODEL endpoints; --model {model} is a local model")
    return LocalChat(model, temperature, top_p)
