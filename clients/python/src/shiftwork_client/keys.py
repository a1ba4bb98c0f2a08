"""CurveZMQ keys from the files `shiftwork keygen NAME` writes: ``NAME.key`` (the secret key) and
``NAME.pub`` (the public key), each one Z85 key of 40 characters on a line, with ``#`` comments."""

from __future__ import annotations

from dataclasses import dataclass

import zmq

from .errors import KeyFileError

_Z85 = set("0123456789abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ.-:+=^!/*?&<>()[]{}@%$#")


def read_key(path: str, what: str = "key") -> bytes:
    """The Z85 key in a key file: its one line that is not blank or a ``#`` comment. The error never
    quotes the file's content (it may be a secret)."""
    try:
        with open(path, encoding="utf-8") as file:
            lines = [line.strip() for line in file]
    except OSError as error:
        raise KeyFileError(f"cannot read the {what} file {path}: {error.strerror or error}") from None
    except UnicodeDecodeError:
        raise KeyFileError(f"{path} is not a text file: expected a CurveZMQ {what} as `shiftwork keygen` writes") from None
    keys = [line for line in lines if line and not line.startswith("#")]
    if len(keys) != 1 or len(keys[0]) != 40 or not set(keys[0]) <= _Z85:
        raise KeyFileError(f"{path} does not hold one CurveZMQ {what} (a line of 40 characters of Z85, "
                           f"as `shiftwork keygen NAME` writes into NAME.key and NAME.pub): is this the right file?")
    return keys[0].encode("ascii")


@dataclass(frozen=True)
class CurveKeys:
    """This client's key pair and the coordinator's public key, ready for a socket."""

    secret_key: bytes
    public_key: bytes
    coordinator_key: bytes

    @classmethod
    def from_files(cls, secret_key_file: str, coordinator_key_file: str) -> "CurveKeys":
        """Reads this client's ``NAME.key`` and the coordinator's ``coordinator.pub``."""
        secret = read_key(secret_key_file, "secret key")
        return cls(secret_key=secret, public_key=zmq.curve_public(secret),
                   coordinator_key=read_key(coordinator_key_file, "public key"))

    def apply(self, socket: zmq.Socket) -> None:
        """Sets the socket's CURVE options (before it connects)."""
        socket.curve_secretkey = self.secret_key
        socket.curve_publickey = self.public_key
        socket.curve_serverkey = self.coordinator_key
