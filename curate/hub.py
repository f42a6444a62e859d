"""Talking to the Hugging Face Hub safely: bounded retries, plain errors, no token in any message.

``huggingface_hub`` retries uploads and downloads itself, but not the calls that change a
repository (``create_repo``, ``create_commit``, ``create_tag``) nor the small reads around them
(``repo_info``, ``list_repo_refs``, ``list_repo_tree``). :func:`call` wraps those: transient
answers (408, 429, 5xx, dropped connections) are retried with a growing wait; everything else is
raised at once. The wait is a parameter, so tests do not sleep.
"""

from __future__ import annotations

import re
import time
from collections.abc import Callable
from typing import Any, TypeVar

T = TypeVar("T")
Sleep = Callable[[float], None]
Say = Callable[[str], None]

RETRYABLE_STATUS = frozenset({408, 429, 500, 502, 503, 504})
WAITS: tuple[float, ...] = (1, 2, 4, 8, 8)  # the same schedule huggingface_hub uses
MAX_RETRY_AFTER = 60.0
LOGIN_HINT = "set HF_TOKEN to a token with write access, or run `hf auth login`"
REPO_ID = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.-]*/[A-Za-z0-9][A-Za-z0-9_.-]*$")


class HubError(Exception):
    """A Hub operation that failed for good; the message is one line and never holds a token."""


class HubAuthError(HubError):
    """The Hub refused the credentials (401) or the permission (403)."""


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


def is_transient(exc: BaseException) -> bool:
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
        except Exception as exc:
            if not is_transient(exc) or attempt >= len(waits):
                raise
            wait = _retry_after(exc) or waits[attempt]
            attempt += 1
            status = status_of(exc)
            reason = f"HTTP {status}" if status else type(exc).__name__
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
