"""Checks before a run does any work: the methods it names exist, and the arXiv and model
endpoints it needs answer. A run that would fail at its generate stage, or after minutes of
retries, fails here in seconds, before the warehouse is touched."""

from __future__ import annotations

import logging
import os
import re

from lilo.tasks.bounded_http import Bounds, ReplyRefused, bounded_client
from lilo.tasks.config import ArxivSettings, RunnerSettings, Settings
from lilo.tasks.errors import Unavailable

__all__ = ["PreflightError", "check_endpoints", "check_extras", "check_names", "preflight"]

# One quick look per endpoint, through the client its stage uses: long enough for a slow TLS
# handshake, short enough that an unreachable host fails the run at once instead of after the
# stages' own retries. The look is bounded like every request (a model list is a few kB).
_TIMEOUT_S = 10.0
_BOUNDS = Bounds(_TIMEOUT_S, 1_000_000, "the preflight's limit")


log = logging.getLogger("lilo")


class PreflightError(Unavailable):
    """A run that cannot work with these settings; the message says what to change."""


def check_names(settings: Settings) -> None:
    """Every method named in the settings is registered (tasks/methods/), with its bracket
    options (`agentwrite[sees-written]`) if any, and the extras the settings need are there."""
    from lilo.tasks.errors import UnknownName
    from lilo.tasks.methods import available_methods, get_method
    from lilo.tasks.registry import did_you_mean

    def unknown_name(name: str) -> bool:
        try:
            get_method(name, settings.generate, settings.llm, settings.embedding)
        except UnknownName:
            return True
        return False

    check_extras(settings.runner)
    known = available_methods()
    wanted = {"generate.methods (--methods)": list(settings.generate.methods)}
    if settings.winrate_against:
        wanted["winrate_against"] = [settings.winrate_against]
    for where, names in wanted.items():
        unknown = [n for n in names if unknown_name(n)]
        if unknown:
            nearest = "".join(did_you_mean(n.split("[")[0], known) for n in unknown)
            raise PreflightError(
                f"unknown method {', '.join(unknown)} in {where}:{nearest} known are "
                f"{', '.join(known)}"
            )
    from lilo.tasks.sweep import SweepError, method_variants

    try:
        method_variants(settings)
    except SweepError as exc:
        raise PreflightError(f"generate.sweep (--sweep): {exc}") from exc


def check_endpoints(settings: Settings, *, arxiv: bool = True) -> None:
    """arXiv's API (when the run fetches) and each OpenAI-compatible endpoint the settings
    use (model, judge, embeddings) answer at all; any HTTP status counts as an answer."""
    if arxiv:
        _check_arxiv(settings.arxiv)
    from lilo.tasks.llm.starting import starts_on_first_use

    llm, judge, embedding = settings.llm, settings.judge, settings.embedding
    for name, backend, base_url in (
        ("llm", llm.backend, llm.base_url),
        ("judge", judge.backend, judge.base_url),
        ("embedding", embedding.backend, embedding.base_url),
    ):
        if backend in ("offline", "local") and base_url:
            upper = name.upper()
            log.warning(
                "%s.base_url %s is not used: %s.backend is %s (set LILO_%s__BACKEND=openai "
                "to use the endpoint)",
                name,
                base_url,
                name,
                backend,
                upper,
            )
    if llm.backend == "openai":
        base_url = llm.base_url or os.environ.get("OPENAI_BASE_URL")
        if not starts_on_first_use(base_url):  # a local model lilo starts when needed
            _check_openai("llm", base_url, llm.key(), instead="offline")
    if judge.backend == "openai" and not starts_on_first_use(judge.base_url):
        _check_openai("judge", judge.base_url, judge.key(), instead="offline")
    if embedding.backend == "openai" and embedding.base_url:
        _check_openai("embedding", embedding.base_url, embedding.key(), instead="local")


def check_extras(runner: RunnerSettings) -> None:
    """The optional extras the settings need are installed (MissingExtra names the one)."""
    from lilo.flows._units import check_runner  # Prefect's, loaded only when a run starts

    check_runner(runner)


def preflight(settings: Settings, *, arxiv: bool = True) -> None:
    """Both checks; raises PreflightError (or MissingExtra) naming the first problem."""
    check_names(settings)
    check_endpoints(settings, arxiv=arxiv)


def _check_arxiv(arxiv: ArxivSettings) -> None:
    """A HEAD of the API through the `requests` session that fetching uses."""
    import requests

    from lilo.tasks.bounded_requests import DeadlinePassed
    from lilo.tasks.fetch import arxiv_session

    url = arxiv.api_url
    try:
        with arxiv_session(arxiv, _BOUNDS) as http:
            http.head(url, allow_redirects=False)
    except (requests.RequestException, DeadlinePassed) as exc:
        raise PreflightError(
            f"arXiv at {url} is unreachable ({_reason(exc)}): check the network or "
            "LILO_ARXIV__API_URL"
        ) from exc


def _check_openai(section: str, base_url: str | None, key: str | None, *, instead: str) -> None:
    """`models.list()`: a server without that route still answers (404), which is enough;
    a refused connection, a timeout or a rejected key is not. `instead` is the section's
    backend that needs no server, which an unreachable one's message offers."""
    import openai

    variable = f"LILO_{section.upper()}"
    client = openai.OpenAI(
        base_url=base_url,
        api_key=key or "not-needed",
        max_retries=0,
        timeout=_TIMEOUT_S,
        http_client=bounded_client(_BOUNDS),
    )
    where = client.base_url
    try:
        client.models.list()
    except ReplyRefused:  # an answer, if no useful one
        pass
    except openai.APIConnectionError as exc:
        raise PreflightError(
            f"{section} endpoint {where} is unreachable ({_reason(exc)}): start the server, "
            f"fix {variable}__BASE_URL, or use {variable}__BACKEND={instead}"
        ) from exc
    except (openai.AuthenticationError, openai.PermissionDeniedError) as exc:
        raise PreflightError(
            f"{section} endpoint {where} rejected the API key ({exc.status_code}): "
            f"set {variable}__API_KEY"
        ) from exc
    except openai.APIStatusError:
        pass


def _reason(exc: BaseException) -> str:
    """The innermost cause in a few words (`[Errno 111] Connection refused`), not the
    chain of wrappers requests, httpx2 and openai put around it."""
    while (inner := exc.__cause__ or exc.__context__) is not None:
        exc = inner
    text = str(exc)
    match = re.search(r"\[Errno -?\d+\][^')\]]*", text)
    return match.group(0).strip() if match else text.split(":")[-1].strip() or type(exc).__name__
