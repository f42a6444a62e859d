"""Talking to the Hugging Face Hub safely: bounded time, bounded retries, plain errors, no token
in any message.

Every Hub operation of curate (``publish``, ``diff hub:…``, ``build --previous hub:…``, a
source ``hf://datasets/…``) runs inside :func:`connection`, which gives ``huggingface_hub`` an
HTTP client of ours:

- every request has a timeout (``CURATE_HUB_TIMEOUT``, default 30 s: connecting, and each wait
  for data), and the whole operation a deadline (``CURATE_HUB_DEADLINE``, default 120 s, retries
  and their waits included): a Hub that accepts a connection and never answers costs at most
  that, then one line;
- transient failures (408, 429, 5xx, refused or dropped connections, timeouts) are raised to
  :func:`call`, which retries them with a growing wait within the deadline, rather than also
  being retried by ``huggingface_hub`` on its own clock (which multiplied the waits);
- ``HF_HUB_OFFLINE=1`` is refused up front with one line.

Everything else is raised at once. The wait is a parameter, so tests do not sleep.
"""

from __future__ import annotations

import json
import os
import re
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any, TypeVar

from curate.errors import HubAuthError, HubError, HubSettingsError, OutOfTime

T = TypeVar("T")
Sleep = Callable[[float], None]
Say = Callable[[str], None]

RETRYABLE_STATUS = frozenset({408, 429, 500, 502, 503, 504})
WAITS: tuple[float, ...] = (1, 2, 4, 8, 8)  # the same schedule huggingface_hub uses
MAX_RETRY_AFTER = 60.0
LOGIN_HINT = "set HF_TOKEN to a token with write access, or run `hf auth login`"
REPO_ID = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.-]*/[A-Za-z0-9][A-Za-z0-9_.-]*$")
TIMEOUT_ENV, DEFAULT_TIMEOUT = "CURATE_HUB_TIMEOUT", 30.0
DEADLINE_ENV, DEFAULT_DEADLINE = "CURATE_HUB_DEADLINE", 120.0


class Transient(Exception):
    """A transport failure or a retryable answer, raised by curate's HTTP transport so that
    :func:`call` retries it within the deadline (``huggingface_hub`` does not retry it again)."""

    def __init__(self, message: str, response: Any = None) -> None:
        super().__init__(message)
        self.response = response


def _seconds(name: str, default: float) -> float:
    text = os.environ.get(name, "").strip()
    if not text:
        return default
    try:
        value = float(text)
    except ValueError:
        value = -1.0
    if not value > 0 or value != value or value == float("inf"):
        raise HubSettingsError(f"{name}={text!r}: expected a positive number of seconds")
    return value


def _offline() -> bool:
    from huggingface_hub import constants

    env = os.environ.get("HF_HUB_OFFLINE", "").strip().upper()
    return env in {"1", "ON", "YES", "TRUE"} or bool(getattr(constants, "HF_HUB_OFFLINE", False))


class _Limits:
    timeout = DEFAULT_TIMEOUT
    deadline: float | None = None  # time.monotonic() value; None outside connection()
    budget = DEFAULT_DEADLINE

    def remaining(self) -> float | None:
        return None if self.deadline is None else self.deadline - time.monotonic()


_limits = _Limits()


def _client_factory() -> Any:
    """huggingface_hub's own client, with curate's transport."""
    import httpx2

    try:
        from huggingface_hub.utils._http import hf_request_event_hook

        hooks: dict[str, list[Any]] = {"request": [hf_request_event_hook]}
    except ImportError:  # pragma: no cover - depends on the huggingface_hub release
        hooks = {}

    class BoundedTransport(httpx2.HTTPTransport):
        def handle_request(self, request: httpx2.Request) -> httpx2.Response:
            limit = _limits.timeout
            left = _limits.remaining()
            if left is not None:
                if left <= 0:
                    raise OutOfTime(
                        f"no answer from the Hub within {_limits.budget:g} s ({DEADLINE_ENV})"
                    )
                limit = min(limit, left)
            given = request.extensions.get("timeout") or {}
            request.extensions["timeout"] = {
                k: limit if given.get(k) is None else min(given[k], limit)
                for k in ("connect", "read", "write", "pool")
            }
            try:
                response = super().handle_request(request)
            except httpx2.TransportError as exc:
                raise Transient(f"{type(exc).__name__}: {exc}") from exc
            if response.status_code in RETRYABLE_STATUS:
                response.read()
                response.close()
                raise Transient(f"HTTP {response.status_code}", response=response)
            return response

    return httpx2.Client(
        event_hooks=hooks,
        follow_redirects=True,
        timeout=_limits.timeout,
        transport=BoundedTransport(),
    )


@contextmanager
def connection(what: str) -> Iterator[None]:
    """Hub calls inside this block have a timeout each and, together, one deadline.

    Raises :class:`HubError` at once if ``HF_HUB_OFFLINE`` is set: ``what`` needs the Hub.
    """
    from huggingface_hub.utils import set_client_factory

    timeout = _seconds(TIMEOUT_ENV, DEFAULT_TIMEOUT)
    budget = _seconds(DEADLINE_ENV, DEFAULT_DEADLINE)
    if _offline():
        raise HubError(f"HF_HUB_OFFLINE is set, and {what} needs the Hub: unset it to go online")
    from huggingface_hub.utils import _http

    previous = (_limits.timeout, _limits.deadline, _limits.budget)
    factory = getattr(_http, "_GLOBAL_CLIENT_FACTORY", None)
    _limits.timeout, _limits.budget = timeout, budget
    _limits.deadline = time.monotonic() + budget
    set_client_factory(_client_factory)
    try:
        yield
    finally:
        _limits.timeout, _limits.deadline, _limits.budget = previous
        if factory is not None and previous[1] is None:
            set_client_factory(factory)


@contextmanager
def reading(
    what: str,
    repo_id: str,
    token: str | None,
    *,
    not_found: Callable[[], Exception],
    no_revision: Callable[[], Exception],
) -> Iterator[None]:
    """A download from the Hub inside :func:`connection`, its failures as curate names them:
    ``not_found()`` for a repository that does not exist (or is not visible), ``no_revision()``
    for a revision it lacks, a one-line :class:`HubError` for anything else of the Hub's."""
    from huggingface_hub.errors import (
        HfHubHTTPError,
        RepositoryNotFoundError,
        RevisionNotFoundError,
    )

    try:
        with connection(what):
            yield
    except RepositoryNotFoundError as exc:
        if token and status_of(exc) == 401:
            raise auth_error(exc, what, repo_id) or HubError(str(exc)) from None
        raise not_found() from None
    except RevisionNotFoundError:
        raise no_revision() from None
    except HfHubHTTPError as exc:
        raise (auth_error(exc, what, repo_id) or HubError(describe(exc, what, token))) from None
    except HubError:
        raise
    except Exception as exc:
        if is_transient(exc):  # raised inside huggingface_hub's worker threads
            raise HubError(describe(_unwrap(exc), what, token)) from None
        raise


def status_of(exc: BaseException) -> int | None:
    response = getattr(exc, "response", None)
    return getattr(response, "status_code", None) if response is not None else None


def _transport_errors() -> tuple[type[BaseException], ...]:
    # Imported on first use, not at the top: every command imports this module (the CLI
    # catches HubError), and huggingface_hub with its HTTP stack costs start-up time.
    try:  # the HTTP library huggingface_hub is built on; its transport errors are transient
        import httpx2
    except ImportError:  # pragma: no cover - depends on the huggingface_hub release
        return ()
    return (httpx2.TimeoutException, httpx2.NetworkError, httpx2.RemoteProtocolError)


def _unwrap(exc: BaseException) -> BaseException:
    """huggingface_hub wraps a failed upload in RuntimeError; the cause is what failed."""
    if type(exc) is RuntimeError and exc.__cause__ is not None:
        return exc.__cause__
    return exc


def unresolvable(exc: BaseException) -> bool:
    """Whether the failure is that the Hub's host name does not resolve (no DNS, offline, a
    typo in HF_ENDPOINT): waiting does not change that, so it is not retried."""
    import socket

    seen: set[int] = set()
    while exc is not None and id(exc) not in seen:
        seen.add(id(exc))
        if isinstance(exc, socket.gaierror):
            return True
        exc = exc.__cause__ or exc.__context__  # type: ignore[assignment]
    return False


def is_transient(exc: BaseException) -> bool:
    if unresolvable(exc):
        return False
    exc = _unwrap(exc)
    if isinstance(exc, Transient):
        return True
    from huggingface_hub.errors import HfHubHTTPError

    if isinstance(exc, HfHubHTTPError):
        return status_of(exc) in RETRYABLE_STATUS
    return isinstance(exc, _transport_errors())


def _retry_after(exc: BaseException) -> float | None:
    response = getattr(exc, "response", None)
    value = response.headers.get("Retry-After") if response is not None else None
    try:
        return min(float(value), MAX_RETRY_AFTER) if value else None
    except ValueError:
        return None


def redact(text: str, token: str | None) -> str:
    """``text`` with the token (and anything shaped like a Hub token) blanked out."""
    if token:
        text = text.replace(token, "hf_***")
    return re.sub(r"\bhf_[A-Za-z0-9]{8,}\b", "hf_***", text)


def describe(exc: BaseException, what: str, token: str | None = None) -> str:
    """One line saying what failed and why, for people."""
    if unresolvable(exc):
        return redact(
            f"{what} failed: the Hub's host name does not resolve (offline, or a wrong "
            "HF_ENDPOINT?)",
            token,
        )
    if isinstance(exc, Transient) and exc.response is None and exc.__cause__ is not None:
        exc = exc.__cause__
    if isinstance(exc, json.JSONDecodeError):
        return redact(
            f"{what} failed: the server's answer is not JSON (is HF_ENDPOINT a Hub?)", token
        )
    status = status_of(exc)
    if status is not None:
        detail = (getattr(exc, "server_message", None) or "").strip().splitlines()
        reason = f"HTTP {status}" + (f" ({detail[0]})" if detail and detail[0] else "")
    else:
        reason = f"{type(exc).__name__}: {str(exc).strip().splitlines()[0] if str(exc) else ''}"
    return redact(f"{what} failed: {reason}", token)


def auth_error(exc: BaseException, what: str, repo_id: str) -> HubAuthError | None:
    """The one-line login message for a 401/403, or None for any other failure."""
    status = status_of(exc)
    if status == 401:
        return HubAuthError(
            f"{what}: the Hub did not accept the credentials (HTTP 401); {LOGIN_HINT}"
        )
    if status == 403:
        return HubAuthError(
            f"{what}: the Hub refused access to {repo_id} (HTTP 403): the token may not write "
            f"there; {LOGIN_HINT}"
        )
    return None


def call(
    fn: Callable[[], T],
    what: str,
    *,
    sleep: Sleep | None = None,
    say: Say | None = None,
    waits: tuple[float, ...] = WAITS,
    recovered: Callable[[], Any] | None = None,
) -> T:
    """``fn()``, retried after each transient failure with the waits in ``waits``.

    ``recovered``, if given, is asked before every retry whether the failed attempt took effect
    after all (a 502 from a proxy after the Hub committed, say); if it returns something other
    than None, that is the result and ``fn`` is not called again.
    """
    pause = sleep or time.sleep
    attempt = 0
    while True:
        try:
            return fn()
        except json.JSONDecodeError as exc:
            raise HubError(describe(exc, what)) from None
        except Exception as raised:
            if unresolvable(raised):
                raise HubError(describe(raised, what)) from None
            if not is_transient(raised):
                raise
            exc = _unwrap(raised)
            wait = _retry_after(exc) or (waits[attempt] if attempt < len(waits) else 0.0)
            left = _limits.remaining()
            if attempt >= len(waits) or (left is not None and left <= wait):
                tail = f" (gave up after {attempt} retries)" if attempt else ""
                if left is not None and left <= wait and attempt < len(waits):
                    tail = f" (gave up: the {_limits.budget:g} s deadline, {DEADLINE_ENV})"
                raise HubError(describe(exc, what) + tail) from None
            attempt += 1
            status = status_of(exc)
            reason = f"HTTP {status}" if status else type(exc.__cause__ or exc).__name__
            if say:
                say(f"{what}: {reason}; retry {attempt}/{len(waits)} in {wait:g}s")
            pause(wait)
            if recovered is not None:
                try:
                    result = recovered()
                except Exception as check_exc:
                    if not is_transient(check_exc):
                        raise
                    result = None
                if result is not None:
                    return result  # type: ignore[no-any-return]
