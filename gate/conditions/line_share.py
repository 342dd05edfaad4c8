"""line_share: the share of non-blank lines a regex matches.

The shape of a heartbeat turn: most of its lines are progress lines. A turn
with one progress line and a paragraph of reasoning is not a heartbeat.
Lines matching `ignore` (a lead-in such as "Latest from the log:") count
neither way, so an introduction does not hide the frame it introduces.
"""

KIND = "line_share"


class LineShare:
    __slots__ = ("pattern", "keywords", "ignore", "low", "high", "min_lines", "timeout", "required_keywords")

    def __init__(self, pattern, keywords, ignore, low, high, min_lines, timeout):
        self.pattern, self.keywords, self.ignore, self.timeout = pattern, keywords, ignore, timeout
        self.low, self.high, self.min_lines = low, high, min_lines
        self.required_keywords = keywords if low > 0 else None

    def __call__(self, subject) -> bool:
        lines = subject.lines
        if self.ignore is not None:
            skip = self.ignore.search
            lines = [line for line in lines if skip(line, timeout=self.timeout) is None]
        if not lines or len(lines) < self.min_lines:
            return False
        if self.keywords is not None and not any(k in subject.lower for k in self.keywords):
            return self.low <= 0
        search = self.pattern.search
        hits = sum(1 for line in lines if search(line, timeout=self.timeout) is not None)
        share = hits / len(lines)
        return self.low <= share <= self.high


def compile(spec, ctx, path):
    ignore = ctx.regex({"pattern": spec["ignore"]}, path + ("ignore",)) if "ignore" in spec else None
    return LineShare(ctx.regex(spec, path), ctx.keywords(spec, path), ignore, spec.get("min_share", 0.0),
                     spec.get("max_share", 1.0), spec.get("min_lines", 1), ctx.timeout)
