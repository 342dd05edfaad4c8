"""match: a regex (or any of several) found anywhere in the subject's text."""

KIND = "match"


class Match:
    __slots__ = ("pattern", "keywords", "timeout", "required_keywords")

    def __init__(self, pattern, keywords, timeout):
        self.pattern, self.keywords, self.timeout = pattern, keywords, timeout
        self.required_keywords = keywords

    def __call__(self, subject) -> bool:
        if self.keywords is not None:
            lower = subject.lower
            if not any(k in lower for k in self.keywords):
                return False
        return self.pattern.search(subject.text, timeout=self.timeout) is not None


def compile(spec, ctx, path):
    return Match(ctx.regex(spec, path), ctx.keywords(spec, path), ctx.timeout)
