"""Masks the credentials a source URL may carry before it is shown (printed, logged), as the coordinator and
the `shiftwork` CLI do (Swift's `SourceRedaction`): the userinfo's password, and the values of the query
parameters that sign or authorise a presigned URL. Only the request itself should use the URL as given."""

import re
from typing import Optional
from urllib.parse import unquote

MASK = "***"

#: Query parameters whose values are credentials (compared lowercased, after percent-decoding the name).
SENSITIVE_PARAMETERS = frozenset({
    "x-amz-signature", "x-amz-credential", "x-amz-security-token",
    "x-goog-signature", "x-goog-credential",
    "sig", "token", "access_token",
})

_SCHEME = re.compile(r"^[A-Za-z0-9+.-]+://")
_URL_IN_TEXT = re.compile(r"[A-Za-z0-9+.-]+://[^\s\"'<>`]*?(?=[.,;:)\]!?]*(?:[\s\"'<>`]|$))")


def redact_source(source: Optional[str]) -> Optional[str]:
    """`source` with its credentials masked: ``http://alice:***@host/x.jpg?X-Amz-Signature=***``. A source
    without any (a path, a plain URL, None) is returned unchanged."""
    if not source:
        return source
    match = _SCHEME.match(source)
    if not match:
        return source
    scheme, rest = source[:match.end()], source[match.end():]
    end = min([i for i in (rest.find("/"), rest.find("?"), rest.find("#")) if i >= 0], default=len(rest))
    authority, tail = rest[:end], rest[end:]
    at = authority.rfind("@")
    if at >= 0 and ":" in authority[:at]:
        authority = authority[:authority.index(":") + 1] + MASK + authority[at:]
    question = tail.find("?")
    if question >= 0:
        fragment = tail.find("#", question)
        fragment = len(tail) if fragment < 0 else fragment
        parameters = []
        for parameter in tail[question + 1:fragment].split("&"):
            name, equals, _ = parameter.partition("=")
            parameters.append(name + "=" + MASK if equals and unquote(name).lower() in SENSITIVE_PARAMETERS else parameter)
        tail = tail[:question + 1] + "&".join(parameters) + tail[fragment:]
    return scheme + authority + tail


def redact_urls(text: str) -> str:
    """`text` (an error message) with every URL in it masked as `redact_source` does."""
    return _URL_IN_TEXT.sub(lambda match: redact_source(match.group(0)), text)
