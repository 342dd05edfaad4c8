"""count: how many times a regex matches, compared with min / max."""

from gate.engine.conditions._bounds import within

KIND = "count"


class Count:
    __slots__ = ("pattern", "keywords", "bounds", "timeout", "required_keywords", "mask", "keyword_mask", "shared", "gate")

    def __init__(self, pattern, keywords, bounds, timeout, mask=0, keyword_mask=0, shared=False, gate=None):
        self.pattern, self.keywords, self.bounds, self.timeout = pattern, keywords, bounds, timeout
        # With min >= 1 the pattern must match, so its keywords must be present.
        self.required_keywords = keywords if bounds.get("min", 0) >= 1 else None
        # prefilter bits (gate/engine/prefilter.py): without them the pattern matches nowhere
        self.mask, self.keyword_mask = mask, keyword_mask
        # shared: rules that count the same pattern in the same subject count it once
        self.shared = shared
        self.gate = gate  # the pattern set (gate/engine/patternset.py): a miss proves a count of 0

    def __call__(self, subject) -> bool:
        if self.gate is not None:
            hits = subject.set_hits(self.gate.group)
            if hits is not None:
                return self._count(subject) if self.gate.present(hits) else within(0, self.bounds)
        if self.mask and not subject.found & self.mask:
            return within(0, self.bounds)
        if self.keyword_mask:
            if not subject.found & self.keyword_mask:
                return within(0, self.bounds)
        elif self.keywords is not None and not any(k in subject.lower for k in self.keywords):
            return within(0, self.bounds)
        return self._count(subject)

    def _count(self, subject) -> bool:
        limit = self.bounds.get("max", self.bounds.get("min", 0)) + 1
        if self.shared:
            memo = subject.memo if subject.memo is not None else subject.set_memo()
            key = ("count", self.pattern.pattern, self.pattern.flags)
            counted = memo.get(key)  # (matches counted, whether that was all of them)
            if counted is not None and (counted[1] or counted[0] >= limit):
                return within(min(counted[0], limit), self.bounds)
        found = 0
        for _ in self.pattern.finditer(subject.text, timeout=self.timeout):
            found += 1
            if found >= limit:  # past every bound: counting further changes nothing
                break
        if self.shared:
            memo[key] = (found, found < limit)
        return within(found, self.bounds)


def compile(spec, ctx, path):
    bounds = {k: spec[k] for k in ("min", "max") if k in spec}
    pattern, keywords = ctx.regex(spec, path), ctx.keywords(spec, path)
    return Count(pattern, keywords, bounds, ctx.timeout, ctx.derived_mask(pattern), ctx.keyword_mask(keywords),
                 shared=ctx.literals is not None, gate=ctx.set_gate(pattern, keywords))
