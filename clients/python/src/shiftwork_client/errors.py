"""The errors the client raises: each says what went wrong and what to do."""

from __future__ import annotations

from typing import Optional


class ShiftworkError(Exception):
    """Base class of every error of this package."""


class NoAnswerError(ShiftworkError):
    """The coordinator did not answer a request in time (it is down, the endpoint is wrong, or CurveZMQ
    refused this client's keys without telling it)."""


class RefusedError(ShiftworkError):
    """The coordinator refused a request: `code` is the `RefusalCode` name (e.g.
    ``REFUSAL_CODE_UNKNOWN_BATCH``), `reason` its text for people."""

    def __init__(self, code: str, reason: str, request_id: str = ""):
        super().__init__(f"the coordinator refused the request ({code}): {reason}")
        self.code = code
        self.reason = reason
        self.request_id = request_id


class ProtocolVersionError(ShiftworkError):
    """The coordinator speaks another major version of the wire protocol than this client: neither can
    read the other's messages. The message names both versions."""

    def __init__(self, coordinator_major: Optional[int], client_major: int, detail: str = ""):
        if coordinator_major is None:
            message = (f"the coordinator does not speak wire protocol major version {client_major}, which this "
                       f"client speaks: use a shiftwork-client release for the coordinator's protocol")
        else:
            message = (f"the coordinator speaks wire protocol major version {coordinator_major}, this client "
                       f"speaks major version {client_major}: use a shiftwork-client release for protocol "
                       f"{coordinator_major}, or a coordinator of protocol {client_major}")
        if detail:
            message += f" (the coordinator said: {detail})"
        super().__init__(message)
        self.coordinator_major = coordinator_major
        self.client_major = client_major


class KeyFileError(ShiftworkError):
    """A CurveZMQ key file that cannot be read or does not hold one key."""


class AuthenticationError(ShiftworkError):
    """The coordinator's CurveZMQ handshake refused this client's key (it is not on its allow-list)."""
