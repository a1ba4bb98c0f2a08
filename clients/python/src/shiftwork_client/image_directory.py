"""The images inside a local directory, found as ``shiftwork submit DIR`` finds them (``ImageDirectory``)."""

from __future__ import annotations

import os
import stat
from dataclasses import dataclass
from typing import List, Optional, Set, Tuple

SNIFFED_BYTES = 64
"""How many of a file's first bytes tell whether it is an image (an ISO BMFF ``ftyp`` box's brands)."""

READABLE_FORMATS = "JPEG, PNG, WebP, AVIF, HEIC, TIFF, GIF or BMP"

_AVIF_BRANDS = (b"avif", b"avis")
_HEIF_BRANDS = (b"heic", b"heix", b"heim", b"heis", b"hevc", b"hevx", b"mif1", b"msf1")
_TIFF = (b"II*\x00", b"MM\x00*", b"II+\x00", b"MM\x00+")


def is_image_signature(head: bytes) -> bool:
    """Whether `head` (a file's first bytes) starts with the signature of a format the workers read: JPEG,
    PNG, WebP, AVIF, HEIC/HEIF, TIFF, GIF or BMP (``ImageFormat(sniffing:)``)."""
    head = head[:SNIFFED_BYTES]
    return (head[:3] == b"\xff\xd8\xff" or head[:8] == b"\x89PNG\r\n\x1a\n"
            or (head[:4] == b"RIFF" and head[8:12] == b"WEBP") or _has_brand(head, _AVIF_BRANDS + _HEIF_BRANDS)
            or head[:4] in _TIFF or head[:6] in (b"GIF87a", b"GIF89a") or _is_bmp(head))


def _has_brand(head: bytes, brands: Tuple[bytes, ...]) -> bool:
    if len(head) < 16 or head[4:8] != b"ftyp":
        return False
    if head[8:12] in brands:
        return True
    end = min(int.from_bytes(head[0:4], "big"), len(head))
    return any(head[offset:offset + 4] in brands for offset in range(16, end - 3, 4))


def _is_bmp(head: bytes) -> bool:
    header_size = int.from_bytes(head[14:18], "little")
    return len(head) >= 18 and head[:2] == b"BM" and header_size in (12, 40, 52, 56, 64, 108, 124)


@dataclass(frozen=True)
class ImageDirectory:
    """The images under `path`: a recursive walk in a stable order (each directory's entries sorted by their
    names' bytes, a subdirectory's images where its name sorts). A file is an image when its first bytes
    say so, whatever its name; hidden entries (a leading ``.``) are passed over; symbolic links are
    followed, a directory reached twice (a link loop) is walked once. What is not an image is listed in
    `skipped`, what cannot be read in `unreadable` (with the reason), and the walk goes on. The names are
    the file system's: escape them before printing them to a terminal."""

    path: str
    images: Tuple[str, ...]
    """The images' paths (`path` joined with their path inside), in walk order."""
    paths_inside: Tuple[str, ...]
    """Each image's path relative to `path` (``2024/01/IMG_0001.HEIC``), in the order of `images`."""
    skipped: Tuple[str, ...]
    unreadable: Tuple[str, ...]

    @staticmethod
    def walk(path: str) -> "ImageDirectory":
        """Lists the images under the directory `path`; `OSError` when `path` itself cannot be read."""
        walk = _Walk()
        walk.visit(path, "", top=True)
        return ImageDirectory(path, tuple(walk.images), tuple(walk.inside), tuple(walk.skipped), tuple(walk.unreadable))

    def skipped_summary(self, shown: int = 5) -> Optional[str]:
        """One line about the files that are not images, or None."""
        if not self.skipped:
            return None
        count = len(self.skipped)
        files = "1 file that is not an image" if count == 1 else f"{count} files that are not images"
        return f"{self.path}: skipped {files} ({READABLE_FORMATS}): {_listed(self.skipped, shown)}"

    def unreadable_summary(self, shown: int = 5) -> Optional[str]:
        """One line about what could not be read, or None."""
        if not self.unreadable:
            return None
        entries = "1 entry" if len(self.unreadable) == 1 else f"{len(self.unreadable)} entries"
        return (f"{self.path}: could not read {entries}, left out (the other images go on): "
                f"{_listed(self.unreadable, shown)}")


def _listed(names: Tuple[str, ...], shown: int) -> str:
    more = f", and {len(names) - shown} more" if len(names) > shown else ""
    return ", ".join(names[:shown]) + more


class _Walk:
    def __init__(self) -> None:
        self.images: List[str] = []
        self.inside: List[str] = []
        self.skipped: List[str] = []
        self.unreadable: List[str] = []
        self.visited: Set[Tuple[int, int]] = set()

    def visit(self, directory: str, relative: str, top: bool) -> None:
        try:
            info = os.stat(directory)
            if (info.st_dev, info.st_ino) in self.visited:
                return
            self.visited.add((info.st_dev, info.st_ino))
            names = sorted((name for name in os.listdir(os.fsencode(directory)) if not name.startswith(b".")))
        except OSError as error:
            if top:
                raise
            self.unreadable.append(f"{relative}/: {error.strerror or error}")
            return
        for raw in names:
            name = os.fsdecode(raw)
            path = os.path.join(directory, name)
            shown = f"{relative}/{name}" if relative else name
            try:
                mode = os.stat(path).st_mode
            except OSError:  # a dangling link, or an entry removed meanwhile
                self.skipped.append(shown)
                continue
            if stat.S_ISDIR(mode):
                self.visit(path, shown, top=False)
            elif stat.S_ISREG(mode):
                try:
                    with open(path, "rb") as file:
                        head = file.read(SNIFFED_BYTES)
                except OSError as error:
                    self.unreadable.append(f"{shown}: {error.strerror or error}")
                    continue
                if is_image_signature(head):
                    self.images.append(path)
                    self.inside.append(shown)
                else:
                    self.skipped.append(shown)
            else:
                self.skipped.append(shown)
