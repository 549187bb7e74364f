"""A model source given as either a file path or the XML text itself (URDF, SRDF, MJCF, a
robot description from a topic): which one it is, decided in one place."""

from __future__ import annotations


def is_xml_text(source: object) -> bool:
    """Whether `source` is XML text (a str whose first non-blank character is '<'), not a
    path to a file."""
    return isinstance(source, str) and source.lstrip().startswith("<")
