"""tool_io: a regex found in the window's tool calls and tool results.

Tool turns are stripped before anything is sent, but what they did is
evidence about the rest of the window: an assistant that read CLAUDE.md and
then restates it is pasting a repository file by another name; a tool result
that printed a password means the window must not leave. So this looks at the
whole window's tool input and output, stripped turns included.
"""

from gate.engine.conditions.context import search_branches

KIND = "tool_io"


class ToolIO:
    __slots__ = ("pattern", "keywords", "timeout", "required_keywords", "branches", "gate")

    def __init__(self, pattern, keywords, timeout, branches=(), gate=None):
        self.pattern, self.keywords, self.timeout = pattern, keywords, timeout
        self.required_keywords = None  # its keywords are about tool text, not the subject's text
        self.branches = branches  # (prefilter bits, regex) per top-level alternative (see match.py)
        self.gate = gate  # what the pattern set knows of this leaf (see match.py)

    def __call__(self, subject) -> bool:
        text = subject.tool_text
        if not text:
            return False
        if self.gate is not None:
            hits = subject.tool_set_hits
            if hits is not None:
                return self.gate.matches(hits, text, self.timeout)
        if self.keywords is not None:
            lower = text.lower()
            if not any(k in lower for k in self.keywords):
                return False
        if self.branches:
            return search_branches(self.branches, subject.tool_found, text, self.timeout)
        return self.pattern.search(text, timeout=self.timeout) is not None


def compile(spec, ctx, path):
    pattern = ctx.regex(spec, path)
    keywords = ctx.keywords(spec, path)
    branches = ctx.branches(pattern)
    gate = ctx.set_gate(pattern, keywords, branches=branches, group="tool")  # tool text has a scan group of its own
    return ToolIO(pattern, keywords, ctx.timeout, branches, gate)
