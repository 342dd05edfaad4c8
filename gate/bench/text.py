"""Words: what a question or an answer is about, for search and for scoring."""

from __future__ import annotations

import re

# Words that carry no content in a question; without them BM25 ranks on what the question is about.
STOPWORDS = frozenset("""a an the of to in on at by for with from and or but is are was were be been being do does did
what when where who whom whose which why how that this these those it its as about into than then there
has have had i you he she we they me him her us them my your his our their""".split())

_WORD = re.compile(r"\w+")


def content_tokens(text: str) -> list:
    """Lowercased words without function words, with a plural 's' taken off long words."""
    out = []
    for word in _WORD.findall(str(text).lower()):
        if word in STOPWORDS:
            continue
        out.append(word[:-1] if len(word) > 3 and word.endswith("s") and not word.endswith("ss") else word)
    return out
