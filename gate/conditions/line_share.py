"""line_share: the share of non-blank lines a regex matches.

The shape of a heartbeat turn: most of its lines are progress lines. A turn
with one progress line and a paragraph of reasoning is not a heartbeat.
"""

KIND = "line_share"


class LineShare:
    __slots__ = ("pattern", "keywords", "low", "high", "min_lines", "timeout", "required_keywords")

    def __init__(self, pattern, keywords, low, high, min_lines, timeout):
        self.pattern, self.keywords, self.timeout = pattern, keywords, timeout
        self.low, self.high, self.min_lines = low, high, min_lines
        self.required_keywords = keywords if low > 0 else None

    def __call__(self, subject) -> bool:
        lines = subject.lines
        if len(lines) < self.min_lines:
            return False
        if self.keywords is not None and not any(k in subject.lower for k in self.keywords):
            return self.low <= 0
        search = self.pattern.search
        hits = sum(1 for line in lines if search(line, timeout=self.timeout) is not None)
        share = hits / len(lines)
        return self.low <= share <= self.high


def compile(spec, ctx, path):
    return LineShare(ctx.regex(spec, path), ctx.keywords(spec, path), spec.get("min_share", 0.0),
                     spec.get("max_share", 1.0), spec.get("min_lines", 1), ctx.timeout)
