"""match: a regex (or any of several) found anywhere in the subject's text."""

from gate.engine.conditions.context import search_branches

KIND = "match"


class Match:
    __slots__ = ("pattern", "keywords", "timeout", "required_keywords", "mask", "keyword_mask", "branches",
                 "gate")

    def __init__(self, pattern, keywords, timeout, mask=0, keyword_mask=0, branches=(), gate=None):
        self.pattern, self.keywords, self.timeout = pattern, keywords, timeout
        self.required_keywords = keywords
        # prefilter bits (gate/engine/prefilter.py): literals every match contains, and the keywords;
        # branches: (bits, regex) per top-level alternative, searched one by one
        self.mask, self.keyword_mask, self.branches = mask, keyword_mask, branches
        self.gate = gate  # what the pattern set (gate/engine/patternset.py) knows of this leaf, or None

    def __call__(self, subject) -> bool:
        if self.gate is not None:
            hits = subject.set_hits(self.gate.group)
            if hits is not None:
                return self.gate.matches(hits, subject.text, self.timeout)
        if self.mask and not subject.found & self.mask:
            return False
        if self.keyword_mask:
            if not subject.found & self.keyword_mask:
                return False
        elif self.keywords is not None:
            lower = subject.lower
            if not any(k in lower for k in self.keywords):
                return False
        if self.branches:
            return search_branches(self.branches, subject.found, subject.text, self.timeout)
        return self.pattern.search(subject.text, timeout=self.timeout) is not None


def compile(spec, ctx, path):
    pattern, keywords = ctx.regex(spec, path), ctx.keywords(spec, path)
    branches = ctx.branches(pattern)
    return Match(pattern, keywords, ctx.timeout, ctx.derived_mask(pattern), ctx.keyword_mask(keywords),
                 branches, ctx.set_gate(pattern, keywords, branches=branches))
