"""Pattern text: named references, and compilation with the regex package.

A pattern may say `{{name}}` to use a vocabulary (its terms as a literal
alternation) or a fragment (a named piece of regex). References are expanded
here, once, so rules never assemble regexes by string templating themselves.
"""

from __future__ import annotations

import re

REFERENCE = re.compile(r"\{\{\s*([a-z][a-z0-9_-]*)\s*\}\}")
_MAX_DEPTH = 16


class ReferenceError_(ValueError):
    """An undefined or cyclic `{{name}}` reference."""


def alternation(pattern) -> str:
    """A pattern given as a list of alternatives, as one regex."""
    if isinstance(pattern, str):
        return pattern
    return pattern[0] if len(pattern) == 1 else "|".join(f"(?:{p})" for p in pattern)


def references(text: str) -> list[str]:
    return REFERENCE.findall(text)


def vocabulary_regex(terms) -> str:
    """Literal terms as one alternation, longest first so 'it/s' beats 'it'."""
    key = tuple(terms)
    found = _VOCABULARY_REGEXES.get(key)
    if found is None:
        ordered = sorted(set(terms), key=lambda t: (-len(t), t))
        found = _VOCABULARY_REGEXES[key] = "(?:" + "|".join(_escape(t) for t in ordered) + ")"
    return found


# A vocabulary is referenced by many patterns: each is escaped and joined once.
_VOCABULARY_REGEXES: dict[tuple, str] = {}


def _escape(term: str) -> str:
    # Spaces inside a term match any run of whitespace: "chunks processed"
    # must also match "chunks  processed" split across a wrapped line.
    return r"\s+".join(re.escape(part) for part in term.split())


def expand(text: str, vocabularies: dict, fragments: dict, _depth: int = 0) -> str:
    """Replace every `{{name}}` with its regex; raise ReferenceError_ if unknown."""
    if _depth > _MAX_DEPTH:
        raise ReferenceError_("fragment references nest too deep (a cycle?)")

    def substitute(match: re.Match) -> str:
        name = match.group(1)
        if name in vocabularies:
            return vocabulary_regex(vocabularies[name])
        if name in fragments:
            return "(?:" + expand(fragments[name], vocabularies, fragments, _depth + 1) + ")"
        raise ReferenceError_(f"'{{{{{name}}}}}' names no vocabulary or fragment")

    return REFERENCE.sub(substitute, text)


def expand_keywords(keywords, vocabularies: dict) -> tuple[str, ...]:
    """Keywords are literals, or `{{vocabulary}}` for all of its terms; lowercased."""
    out = []
    for keyword in keywords:
        names = references(keyword)
        if names and REFERENCE.fullmatch(keyword.strip()):
            name = names[0]
            if name not in vocabularies:
                raise ReferenceError_(f"keyword '{keyword}' names no vocabulary")
            # A multi-word term may be wrapped across whitespace in the text,
            # so its keyword is its longest single word.
            out.extend(max(term.lower().split(), key=len) for term in vocabularies[name])
        else:
            out.append(_longest_word(keyword))
    return tuple(dict.fromkeys(out))


def _longest_word(phrase: str) -> str:
    """A multi-word keyword as a prefilter can trust it: its longest single word, as for a
    vocabulary term. Patterns spell the space inside a phrase as \\s+, so 'heads up' also
    matches across two spaces or a line separator (U+0085), where the literal is absent."""
    return max(phrase.lower().split(), key=len) if len(phrase.split()) > 1 else phrase.lower()
