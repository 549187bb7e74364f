"""Errors raised by the scene store. Each names what was expected and what came."""

from __future__ import annotations

import difflib
from collections.abc import Iterable


class SceneError(ValueError):
    """A scene operation was rejected; the scene is as it was before the call."""


class SpawnError(SceneError):
    """An entity could not be added; nothing of it stayed in the scene."""


class UnknownNameError(SceneError, KeyError):
    """A name that the scene does not hold."""

    def __str__(self) -> str:  # KeyError would quote the message
        return str(self.args[0])


def unknown(kind: str, name: object, known: Iterable[str]) -> UnknownNameError:
    """An error for an unknown `name` of `kind`, suggesting close matches."""
    known = [str(k) for k in known]
    close = difflib.get_close_matches(str(name), known, n=3)
    hint = f"; did you mean {', '.join(repr(c) for c in close)}?" if close else ""
    return UnknownNameError(f"unknown {kind} {name!r}{hint}")


class AssetWarning(UserWarning):
    """An asset that could not be used as given: what was left out or replaced, and why."""
