"""count: how many times a regex matches, compared with min / max."""

from gate.conditions._bounds import within

KIND = "count"


class Count:
    __slots__ = ("pattern", "keywords", "bounds", "timeout", "required_keywords")

    def __init__(self, pattern, keywords, bounds, timeout):
        self.pattern, self.keywords, self.bounds, self.timeout = pattern, keywords, bounds, timeout
        # With min >= 1 the pattern must match, so its keywords must be present.
        self.required_keywords = keywords if bounds.get("min", 0) >= 1 else None

    def __call__(self, subject) -> bool:
        if self.keywords is not None and not any(k in subject.lower for k in self.keywords):
            return within(0, self.bounds)
        limit = self.bounds.get("max", self.bounds.get("min", 0)) + 1
        found = 0
        for _ in self.pattern.finditer(subject.text, timeout=self.timeout):
            found += 1
            if found >= limit:  # past every bound: counting further changes nothing
                break
        return within(found, self.bounds)


def compile(spec, ctx, path):
    bounds = {k: spec[k] for k in ("min", "max") if k in spec}
    return Count(ctx.regex(spec, path), ctx.keywords(spec, path), bounds, ctx.timeout)
