"""line_share: the share of non-blank lines a regex matches.

The shape of a heartbeat turn: most of its lines are progress lines. A turn
with one progress line and a paragraph of reasoning is not a heartbeat.
Lines matching `ignore` (a lead-in such as "Latest from the log:") count
neither way, so an introduction does not hide the frame it introduces. Lines
matching `miss` never count as matching, whatever the pattern finds in them: a
line that reads as a sentence is a person's, even with "1.2GB/s" or "step 3/5"
in it. It is searched only on lines the pattern matched. With `continuations`, a
line indented deeper than the line above it continues that line, and counts when
it does (unless `miss` matches it): a traceback's code under its frame, an
exception's message on the lines below it, whatever their words.

`spare` turns a turn rule that fires on a person's turn into a cut: when a
line reads as theirs (a question above pasted log lines), only their lines and
lead-ins stay, and the paste is cut (conditions/_person_lines.py). A turn with
no such line goes whole, as without `spare`.
"""

from gate.engine.conditions._person_lines import compile_spare, person_lines
from gate.engine.conditions.context import search_branches
from gate.engine.features import continuation_heads

KIND = "line_share"


class LineShare:
    __slots__ = ("pattern", "keywords", "ignore", "miss", "spare", "spare_within", "low", "high", "min_lines",
                 "timeout", "required_keywords", "mask", "keyword_mask", "ignore_mask", "branches", "gate",
                 "ignore_gate", "continuations")

    def __init__(self, pattern, keywords, ignore, low, high, min_lines, timeout, mask=0, keyword_mask=0,
                 ignore_mask=0, branches=(), gate=None, ignore_gate=None, miss=None, spare=None,
                 spare_within=None, continuations=False):
        self.pattern, self.keywords, self.ignore, self.timeout = pattern, keywords, ignore, timeout
        self.miss, self.spare, self.spare_within = miss, spare, spare_within
        self.low, self.high, self.min_lines = low, high, min_lines
        self.continuations = continuations
        self.required_keywords = keywords if low > 0 else None
        # prefilter bits (gate/engine/prefilter.py): a line without any of `mask` cannot match the
        # pattern, nor one without any of `ignore_mask` the ignore pattern
        self.mask, self.keyword_mask, self.ignore_mask = mask, keyword_mask, ignore_mask
        self.branches = branches  # (bits, regex) per top-level alternative of the pattern
        # the line forms of the pattern and of `ignore` in the pattern set (gate/engine/patternset.py):
        # over the subject, a miss proves no line matches; line by line, they judge each line
        self.gate, self.ignore_gate = gate, ignore_gate

    def __call__(self, subject) -> bool:
        if self.gate is not None:
            hits = subject.set_hits(self.gate.group)
            if hits is not None:
                if self.low > 0 and not self.gate.present(hits):
                    return False  # no line can match, so the share is 0, below min_share
                if self.ignore is None or self.ignore_gate is not None:
                    return self._by_set(subject, subject.lines, hits)
        if (self.mask or self.keyword_mask) and self.low > 0:
            found = subject.found
            if (self.mask and not found & self.mask) or (self.keyword_mask and not found & self.keyword_mask):
                return False  # no line can match, so the share is 0, below min_share
        lines = subject.lines
        if self.mask or self.ignore_mask or self.branches:
            return self._by_line(subject, lines)
        if self.ignore is not None:
            skip = self.ignore.search
            keep = [i for i, line in enumerate(lines) if skip(line, timeout=self.timeout) is None]
        else:
            keep = range(len(lines))
        if not keep or len(keep) < self.min_lines:
            return False
        if self._keywords_absent(subject):
            return self.low <= 0
        search, missed, timeout = self.pattern.search, self._missed, self.timeout
        return self._share_within(keep, self._continued(
            subject, keep, lambda i: search(lines[i], timeout=timeout) is not None and not missed(lines[i])))

    def _keywords_absent(self, subject) -> bool:
        """The leaf's own keywords are nowhere in the text, so no line can match."""
        if self.keyword_mask:
            return not subject.found & self.keyword_mask
        return self.keywords is not None and not any(k in subject.lower for k in self.keywords)

    def _by_set(self, subject, lines, hits: int) -> bool:
        """The judgement with each line's set hits: a line is searched only when the set
        cannot tell on its own (an inexact pattern whose pieces all hit that line)."""
        line_hits, timeout = subject.line_set_hits(self.gate.group), self.timeout
        if None in line_hits:  # a scan the set could not finish: judge as without it
            return self._by_line(subject, lines)
        if self.ignore is not None:  # rules often share an ignore pattern: filter once per subject
            key = (self.ignore.pattern, self.ignore.flags)
            memo = subject.memo if subject.memo is not None else subject.set_memo()
            keep = memo.get(key)
            if keep is None:
                skip = self.ignore_gate.pattern_matches
                keep = memo[key] = [i for i, line in enumerate(lines) if not skip(line_hits[i], line, timeout)]
        else:
            keep = range(len(lines))
        if not keep or len(keep) < self.min_lines:
            return False
        if self.gate.keywords and not hits & self.gate.keywords:
            return self.low <= 0  # the leaf's keywords are nowhere in the text
        matches, missed = self.gate.pattern_matches, self._missed
        return self._share_within(keep, self._continued(
            subject, keep, lambda i: matches(line_hits[i], lines[i], timeout) and not missed(lines[i])))

    def _by_line(self, subject, lines) -> bool:
        """The same judgement, with each line's regex run only when its literals are in it."""
        masks, timeout = subject.line_found, self.timeout
        if self.ignore is not None:  # rules often share an ignore pattern: filter once per subject
            key = (self.ignore.pattern, self.ignore.flags)
            memo = subject.memo if subject.memo is not None else subject.set_memo()
            keep = memo.get(key)
            if keep is None:
                skip, ignore_mask = self.ignore.search, self.ignore_mask
                keep = memo[key] = [i for i, line in enumerate(lines)
                                    if (ignore_mask and not masks[i] & ignore_mask) or skip(line, timeout=timeout) is None]
        else:
            keep = range(len(lines))
        if not keep or len(keep) < self.min_lines:
            return False
        if self._keywords_absent(subject):
            return self.low <= 0
        mask, missed = self.mask, self._missed
        branches = self.branches or (((mask,) if mask else (), self.pattern),)

        def hit(i) -> bool:
            found = masks[i]
            return (not (mask and not found & mask) and search_branches(branches, found, lines[i], timeout)
                    and not missed(lines[i]))

        return self._share_within(keep, self._continued(subject, keep, hit))

    def _continued(self, subject, keep, own):
        """`own` (line index -> whether the line counts by itself), or, with `continuations`, a
        judgement that also counts a kept line continuing a kept line that counts, when no `miss`
        (a sentence) matches it. `_share_within` asks in order, so a line's head is judged first."""
        if not self.continuations:
            return own
        heads, kept, judged, lines = subject.line_heads, set(keep), {}, subject.lines

        def counts(i) -> bool:
            found = judged.get(i)
            if found is None:
                head = heads[i]
                found = judged[i] = own(i) or (head in kept and counts(head) and not self._missed(lines[i]))
            return found

        return counts

    def spared(self, text: str) -> str | None:
        """What `spare` leaves of a person's turn the rule fired on (None: nothing of theirs)."""
        if self.spare is None:
            return None
        search, timeout = self.pattern.search, self.timeout

        def counted(line: str) -> bool:  # as the share counts it: lead-ins neither way, sentences never
            return not self._ignored(line) and search(line, timeout=timeout) is not None and not self._missed(line)

        return person_lines(text, counted, self.spare, self.spare_within, self.ignore, timeout,
                            self._counted_at(text, counted) if self.continuations else None)

    def _counted_at(self, text: str, counted):
        """A line's place in text.splitlines() -> whether it counts, as the share counts it with
        `continuations`. Judged when asked, as person_lines asks (from each end, then inside),
        so most of a long paste is never searched; a line's heads are judged first, top down."""
        raw = text.splitlines()
        places = [i for i, line in enumerate(raw) if line.strip()]
        rank = {place: k for k, place in enumerate(places)}
        heads, judged = continuation_heads([text]), {}

        def judge(k: int) -> bool:
            bare = raw[places[k]].strip()
            head = heads[k]
            return counted(bare) or (head >= 0 and judged[head] and not self._ignored(bare)
                                     and not self._missed(bare))

        def counts(place: int) -> bool:
            chain, k = [], rank[place]
            while k >= 0 and k not in judged:  # up to the first head judged (never recursion: no depth limit)
                chain.append(k)
                k = heads[k]
            for k in reversed(chain):
                judged[k] = judge(k)
            return judged[rank[place]]

        return counts

    def _ignored(self, line: str) -> bool:
        """A line `ignore` matches (a lead-in), which counts neither way."""
        return self.ignore is not None and self.ignore.search(line, timeout=self.timeout) is not None

    def _missed(self, line: str) -> bool:
        """A line `miss` matches, which never counts as matching (asked only of lines that do)."""
        return self.miss is not None and self.miss.search(line, timeout=self.timeout) is not None

    def _share_within(self, keep, hit) -> bool:
        """Whether the share of `keep` (line indexes) for which `hit(i)` holds is within bounds."""
        n, low, high = len(keep), self.low, self.high
        if low <= 0 and high >= 1:
            return True  # any share will do
        # Stop as soon as the answer is certain: the share only grows with each hit,
        # and can grow at most by the lines still to look at.
        hits = 0
        for done, i in enumerate(keep, 1):
            if hit(i):
                hits += 1
                if hits / n > high:
                    return False
                if high >= 1 and low <= hits / n:
                    return True
            elif (hits + n - done) / n < low:
                return False
        return low <= hits / n <= high


def compile(spec, ctx, path):
    ignore = ctx.regex({"pattern": spec["ignore"]}, path + ("ignore",)) if "ignore" in spec else None
    miss = ctx.regex({"pattern": spec["miss"]}, path + ("miss",)) if "miss" in spec else None
    spare, within = compile_spare(spec, ctx, path)
    pattern, keywords = ctx.regex(spec, path), ctx.keywords(spec, path)
    branches = ctx.branches(pattern)
    return LineShare(pattern, keywords, ignore, spec.get("min_share", 0.0), spec.get("max_share", 1.0),
                     spec.get("min_lines", 1), ctx.timeout, ctx.derived_mask(pattern), ctx.keyword_mask(keywords),
                     ctx.derived_mask(ignore) if ignore is not None else 0, branches,
                     ctx.set_gate(pattern, keywords, lines=True, branches=branches),
                     ctx.set_gate(ignore, None, lines=True) if ignore is not None else None, miss, spare, within,
                     spec.get("continuations", False))
