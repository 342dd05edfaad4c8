"""The order of rules files by version: v2.10 comes after v2.9, not between v2.1 and v2.2."""
import os
import re


def version_key(name: str) -> tuple:
    """Sort key of a rules file name: runs of digits compare as numbers, the rest as text.

    The extension is set aside first, so v2.3 sorts before v2.3.1 and v2 before v2.3.
    """
    stem, extension = os.path.splitext(name)
    # re.split with a capture group alternates text, number, text...: same kinds meet at every index.
    parts = [int(part) if index % 2 else part for index, part in enumerate(re.split(r"(\d+)", stem))]
    return parts, extension


def newest(names) -> str:
    """The highest-versioned of these file names."""
    return max(names, key=version_key)
