"""The classifier: a window in, a Decision out. Pure, deterministic, no I/O.

Order of judgement:
1. turn rules strip noise turn by turn (a fact between two progress lines
   survives; a window whose every turn is noise is dropped);
2. window rules judge what is left (repo-file pastes, secrets, repeats); a
   payload rule drops the window only for evidence in the person's own turns,
   and otherwise strips the other turns it judged (a tool read a file or printed
   a token, and the assistant restated it: the person's words still go); with
   `spare`, the person's own lines beside their paste are judged again without it;
3. signals score what is left per type; the level's threshold decides flag
   or skip, and the highest-scoring type is the memory type.
"""

from __future__ import annotations

import dataclasses
import re
import time

from gate.engine.decision import Decision
from gate.engine.features import ReferenceSubject, Subject
from gate.engine.literals import fold
from gate.language.model import ALL_TYPES_KEY, DURABLE_TYPES
from gate.engine.window import normalize_window


SPAN_TIMEOUT = 0.05  # seconds per span rule and turn
RETRY_WITHIN = 0.5  # seconds: a window whose pattern timed out sooner than this is judged once more
_HEADING = re.compile(r"#{1,6}[ \t]")


class RuleTimeout(Exception):
    def __init__(self, rule_id: str):
        self.rule_id = rule_id


class Classifier:
    def __init__(self, revision, rules, *, scanner=None, sets=None, optimize: bool = True):
        self.scanner = scanner  # gate/engine/prefilter.py: every rule's literals found in one pass per turn
        self.sets = sets  # gate/engine/patternset.py: every pattern searched in one pass per subject
        self._judged = 0
        self._subject = Subject if optimize else ReferenceSubject
        self.policy = revision.policy
        self.revision = revision.revision
        self.levels = revision.levels
        self.default_level = revision.default_level
        self.thresholds = dict(revision.flag_thresholds)
        self.types = tuple(t for t in revision.categories if t in DURABLE_TYPES)
        self.rules = rules
        self._by_level = {}
        self._spans_by_level = {}  # span rules: cut out of the turns before anything judges them
        for index, level in enumerate(self.levels):
            active = [r for r in rules if r.active_at(index)]
            self._spans_by_level[level] = tuple(r for r in active if r.kind == "drop" and r.scope == "span")
            active = [r for r in active if r.scope != "span"]
            self._by_level[level] = (
                tuple(r for r in active if r.kind == "drop" and r.scope == "turn"),
                tuple(r for r in active if r.kind == "drop" and r.scope != "turn"),  # window and payload rules
                tuple(r for r in active if r.kind == "signal"),
            )

    def classify(self, window, level: str | None = None, recent_shapes=()) -> Decision:
        level = level or self.default_level
        started = time.perf_counter()
        decision = self._classify_once(window, level, recent_shapes)
        if decision.error and decision.error.startswith("timeout") and time.perf_counter() - started < RETRY_WITHIN:
            # A pattern's budget is the process's CPU time, and a search's matches read one by one
            # share it with whatever runs between them (a garbage collection, another thread): an
            # ordinary window can run out once. Judged once more, it decides; a pattern that
            # backtracks without end times out again, and a window slow to judge is not judged twice.
            decision = self._classify_once(window, level, recent_shapes, again=True)
        return decision

    def _classify_once(self, window, level: str, recent_shapes, again: bool = False) -> Decision:
        try:
            if level not in self._by_level:
                return self._decision("skip", _utf8(str(level)), rule=None, trace=(f"unknown level {level!r}",),
                                      error=f"unknown level {level!r}; levels are {', '.join(self.levels)}")
            return self._classify(window, level, recent_shapes)
        except RuleTimeout as timeout:
            return self._decision("skip", level, rule=timeout.rule_id,
                                  trace=(f"{timeout.rule_id}: pattern timed out{' twice' if again else ''};"
                                         " window not sent",),
                                  error=f"timeout in rule '{timeout.rule_id}'")
        except Exception as exc:  # the classifier never raises: a hook must never break a session
            return self._decision("skip", level, rule=None, trace=(f"internal error: {type(exc).__name__}",),
                                  error=_utf8(f"internal error: {type(exc).__name__}: {exc}"[:300]))

    def _decision(self, action, level, *, rule, trace, type_=None, payload=(), shape="", scores=None, error=None):
        return Decision(action=action, type=type_, rule=rule, trace=tuple(trace), payload=tuple(payload),
                        policy=self.policy, level=level, shape=shape, scores=scores or {}, error=error)

    def _classify(self, window, level: str, recent_shapes) -> Decision:
        turns = normalize_window(window)
        spans = self._spans_by_level[level]
        cut, cut_by = [], None
        if spans and turns:
            turns, cut, cut_by = _cut_spans(turns, spans)
        # Shapes are strings; anything else a caller passes cannot match and is ignored.
        recent = frozenset(s for s in recent_shapes if isinstance(s, str)) if recent_shapes else frozenset()
        make = self._subject
        # Building the pattern set costs about 20 ms, and saves a few hundred µs a window:
        # a process that judges one window (an editor hook) does without it.
        self._judged += 1
        whole = make(turns, recent, scanner=self.scanner, sets=self.sets if self._judged > 1 else None)
        shape = whole.window_shape
        if not turns:
            if cut_by is not None:
                return self._decision("drop", level, rule=cut_by, trace=(*cut, "every turn is noise"), shape=shape)
            return self._decision("drop", level, rule=None, trace=("empty window",), shape=shape)
        return self._judge(turns, whole, level, recent, list(cut), shape, spare=True)

    def _judge(self, turns, whole, level: str, recent, trace: list, shape: str, *, spare: bool) -> Decision:
        """Turn rules, window rules, then signals, on the window's turns (`whole` is their subject).
        `spare`: whether a payload rule with `spare` may cut the person's turns down to their own
        lines and judge those again (once: what is left is judged with spare False)."""
        turn_rules, window_rules, signals = self._by_level[level]
        make = self._subject
        stripped, trimmed = {}, {}
        for turn in turns:
            subject = make((turn,), recent, window=whole) if len(turns) > 1 else whole
            hits, found = subject.set_hits("turn"), None
            for rule in turn_rules:
                if rule.role != "any" and rule.role != turn.role:
                    continue
                needs = rule.turn_needs
                if needs is not None:
                    flags, least_chars, least_turns = needs
                    if ((flags is not None and not flags & turn.flags) or len(turn.text) < least_chars
                            or len(turns) < least_turns):
                        continue
                # The pattern set where it can say, else the keyword prefilter: most rules stop here.
                if hits is not None:
                    if rule.set_mask and not hits & rule.set_mask:
                        continue
                elif rule.mask:
                    if found is None:
                        found = subject.found
                    if not found & rule.mask:
                        continue
                if _fires(rule, subject):
                    # the person's own turn, with a line they wrote: only their lines stay
                    rest = _spared(rule, turn.text) if rule.cut_lines is not None and turn.role == "user" else None
                    if rest is not None:
                        trimmed[turn.index] = dataclasses.replace(turn, text=rest)
                        trace.append(f"turn {turn.index} ({turn.role}): paste cut out by {rule.id}, "
                                     "the person's lines kept")
                    else:
                        stripped[turn.index] = rule.id
                        trace.append(f"turn {turn.index} ({turn.role}) stripped by {rule.id}")
                    break
        if trimmed:  # judged from here on as what is left of them (their parts share the window's)
            turns = tuple(trimmed.get(t.index, t) for t in turns)
            whole = make(turns, recent, scanner=self.scanner, sets=self.sets if self._judged > 1 else None)
            shape = whole.window_shape
        kept = tuple(t for t in turns if t.index not in stripped)
        if not kept:
            first = stripped[turns[0].index]
            return self._decision("drop", level, rule=first, trace=trace + ["every turn is noise"], shape=shape)

        subjects = _RoleSubjects(whole if not stripped else make(kept, recent, window=whole), recent, whole, make)
        for rule in window_rules:
            subject = subjects[rule.role]
            if not (subject.turns and _fires(rule, subject)):
                continue
            if rule.scope == "payload":
                others = _spare_the_person(rule, subject, recent, whole, make)
                if others is not None:  # the evidence is not in the person's words: take only the rest
                    if not others:
                        trace.append(f"{rule.id}: evidence only in tool calls and results; the person's turns are kept")
                        continue
                    for turn in others:
                        stripped[turn.index] = rule.id
                        trace.append(f"turn {turn.index} ({turn.role}) stripped by {rule.id}")
                    kept = tuple(t for t in kept if t.index not in stripped)
                    if not kept:
                        return self._decision("drop", level, rule=rule.id, trace=trace + ["every turn is noise"],
                                              shape=shape)
                    subjects = _RoleSubjects(make(kept, recent, window=whole), recent, whole, make)
                    continue
                if spare and rule.spare is not None:
                    sparing = self._spare_lines(rule, kept, level, recent, trace, shape)
                    if sparing is not None:
                        return sparing
            trace.append(f"window dropped by {rule.id}")
            return self._decision("drop", level, rule=rule.id, trace=trace, shape=shape)

        scores = dict.fromkeys(self.types, 0.0)
        fired = []
        by_role = {}  # role -> (subject, its set hits)
        for signal in signals:
            state = by_role.get(signal.role)
            if state is None:
                subject = subjects[signal.role]
                state = by_role[signal.role] = (subject, subject.set_hits(signal.set_group) if subject.turns else None)
            subject, hits = state
            if not subject.turns:
                continue
            if hits is not None:
                if signal.set_mask and not hits & signal.set_mask:
                    continue
            elif signal.mask and not subject.found & signal.mask:
                continue
            if not _fires(signal, subject):
                continue
            if signal.weigh is None:
                weights, line = signal.weights, signal.trace_line
            else:  # a lexicon: the weights of the terms found in this window
                weights, line = signal.weigh(subject)
            fired.append((signal, weights))
            spread = weights.get(ALL_TYPES_KEY, 0.0)
            for type_name in self.types:
                scores[type_name] += weights.get(type_name, 0.0) + spread
            trace.append(line)

        payload = tuple(t.as_message() for t in kept)
        threshold = self.thresholds[level]
        best = max(self.types, key=lambda t: scores[t]) if self.types else None  # ties: categories order
        if best is not None and fired and scores[best] >= threshold:
            decider = max(fired, key=lambda sw: sw[1].get(best, 0.0) + sw[1].get(ALL_TYPES_KEY, 0.0))[0]
            trace.append(f"flag {best}: {scores[best]:g} >= {threshold:g} ({level})")
            return self._decision("flag", level, rule=decider.id, trace=trace, type_=best, payload=payload,
                                  shape=shape, scores=scores)
        top = scores[best] if best is not None else 0.0
        trace.append(f"skip: best score {top:g} < {threshold:g} ({level})")
        return self._decision("skip", level, rule=None, trace=trace, payload=payload, shape=shape, scores=scores)

    def _spare_lines(self, rule, kept, level: str, recent, trace: list, shape: str) -> Decision | None:
        """A payload rule found its evidence in the person's words. Their lines that the rule's
        `spare` keeps (a sentence of their own above or below the paste) are judged again as the
        window, the rest of their turns cut. What is left is flagged when the signals see knowledge
        in it at this level; at a level stricter than the default, skipped when they see it at
        the default level (a stricter level does not hard-drop what the default would keep: a
        skip is recoverable); with `spare_unflagged: skip`, skipped at every level, the person's
        words judged as if nothing had been pasted beside them. None (the window is dropped)
        when nothing is kept, the rule still fires, or nothing is flagged or skipped."""
        cut = _person_lines_kept(rule, kept)
        if cut is None:
            return None
        note = [f"turn {t.index} ({t.role}): cut by {rule.id} to the person's own lines"
                for t in cut if t.role == "user"]
        whole = self._subject(cut, recent, scanner=self.scanner, sets=self.sets if self._judged > 1 else None)
        decision = self._judge(cut, whole, level, recent, [*trace, *note], shape, spare=False)
        if decision.action == "flag":
            return decision
        if decision.action == "skip" and rule.spare_unflagged == "skip":
            return dataclasses.replace(
                decision, trace=(*decision.trace, f"{rule.id} keeps the person's lines: skipped, not dropped"))
        default = self.default_level
        if decision.action == "skip" and self.levels.index(level) < self.levels.index(default):
            if self._judge(cut, whole, default, recent, [], shape, spare=False).action == "flag":
                return dataclasses.replace(
                    decision, trace=(*decision.trace, f"what is left is flagged at {default}: skipped, not dropped"))
        return None


def _person_lines_kept(rule, turns):
    """`turns` with each of the person's turns cut to the lines `rule.spare` matches (stripped),
    or, in a turn that fenced its paste, `rule.spare_outside_fence` matches outside every fence;
    with `rule.spare_continuations`, a line that continues the one above it in one of those ways is
    kept exactly when that line is. A turn of theirs with none goes. None when no line of theirs is kept."""
    out, kept_any = [], False
    for turn in turns:
        if turn.role != "user":
            out.append(turn)
            continue
        lines, above = [], False
        try:
            read = _lines_and_fences(turn.text, rule.spare_outside_fence is not None)
            opens = _file_opens(rule.spare_above_file, read)
            for at, (line, outside, continues) in enumerate(read):
                if continues in rule.spare_continuations:
                    kept = above  # a wrapped line goes with the line it continues
                else:
                    kept = bool(rule.spare.search(line, timeout=SPAN_TIMEOUT)
                                or (outside and rule.spare_outside_fence.search(line, timeout=SPAN_TIMEOUT))
                                or (at < opens and rule.spare_above_file[1].search(line, timeout=SPAN_TIMEOUT)))
                if kept:
                    lines.append(line)
                above = kept
        except TimeoutError:
            raise RuleTimeout(rule.id) from None
        if lines:
            kept_any = True
            out.append(dataclasses.replace(turn, text="\n".join(lines)))
    return tuple(out) if kept_any else None


# A person writes a few lines above the file they paste; a file's own name further down is a
# heading inside it (a README's "## CONTRIBUTING.md" section), with the file's lines above.
ABOVE_FILE_MAX = 4


def _file_opens(above_file, read: list) -> int:
    """The index, in `read` (_lines_and_fences), of the line a pasted file opens with (the first
    that `above_file`'s opens matches, among the first ABOVE_FILE_MAX + 1 lines); 0 when there is
    none, so no line lies above it."""
    if above_file is None:
        return 0
    opens = above_file[0]
    return next((at for at, (line, _, _) in enumerate(read[:ABOVE_FILE_MAX + 1])
                 if opens.search(line, timeout=SPAN_TIMEOUT)), 0)


# A person writes a few lines around the paste they fenced; a document whose code block is its
# own (a pasted AGENTS.md, a README section) has more lines outside the fence, or a heading there.
FENCED_PASTE_MAX_OUTSIDE = 4


def _lines_and_fences(text: str, fences: bool):
    """(stripped line, whether it sits outside the fence of a fenced paste, whether it continues
    the line above it) for each non-blank line that is no fence line itself. A turn fenced its
    paste when what lies outside its closed fences is at most FENCED_PASTE_MAX_OUTSIDE lines and
    no markdown heading; those lines are the person's. An unclosed fence runs to the end;
    `fences` False reads none."""
    lines = text.splitlines()
    marks = [i for i, line in enumerate(lines) if line.lstrip().startswith(("```", "~~~"))] if fences else []
    if len(marks) < 2:
        return [(line.strip(), False, _continues(lines, i)) for i, line in enumerate(lines) if line.strip()]
    inside, opened = set(marks), None
    for i in marks:
        if opened is None:
            opened = i
        else:
            inside.update(range(opened, i + 1))
            opened = None
    if opened is not None:
        inside.update(range(opened, len(lines)))
    outside = [line.strip() for i, line in enumerate(lines) if i not in inside and line.strip()]
    fenced_paste = len(outside) <= FENCED_PASTE_MAX_OUTSIDE and not any(_HEADING.match(line) for line in outside)
    return [(line.strip(), fenced_paste and i not in inside, _continues(lines, i)) for i, line in enumerate(lines)
            if line.strip() and i not in marks]


# A sentence runs on past these: the line after one, with no blank line between, is its rest.
_RUNS_ON = re.compile(r"(?:[,;(\[{]|\b(?:and|or|but|the|a|an|of|to|with|via|by|for|in|on|from|than|that))\Z",
                      re.IGNORECASE)


# A hard-wrapped paragraph breaks where the column ends, after any word: a long line of prose (it
# opens with a word or a list mark, not a timestamp or a bracket as a log line does) that ends in
# a lowercase word.
_WRAPPED = re.compile(r"[ \t]*(?:[-*+][ \t]+|\d{1,2}[.)][ \t]+)?[A-Za-z`\"'].{58,}[a-z]\Z")


def _continues(lines: list, i: int) -> str:
    """How line `i` is the wrapped rest of line `i - 1`, or "" when it is not. Either way there is
    no blank line between and it opens in lowercase; "mid_sentence" when it is indented deeper
    (a list item's second line) or the line above stops mid-sentence (a comma, a semicolon, an
    open bracket, a word that joins); "wrapped" when the line above is only a long line of prose
    that ends in a word."""
    if i == 0 or not lines[i - 1].strip():
        return ""
    line, above = lines[i], lines[i - 1]
    bare = line.lstrip()
    if not bare[:1].islower() or above.lstrip().startswith(("```", "~~~")):
        return ""
    deeper = len(line) - len(bare) > len(above) - len(above.lstrip())
    if deeper or _RUNS_ON.search(above.rstrip()) is not None:
        return "mid_sentence"
    return "wrapped" if _WRAPPED.match(above.rstrip()) else ""


def _utf8(text: str) -> str:
    """Text from the input, safe to write as UTF-8 (a lone surrogate becomes '?')."""
    return text.encode("utf-8", "replace").decode("utf-8")


def _spare_the_person(rule, subject, recent, whole, make):
    """A payload rule fired on `subject`. None when the person's own turns carry the
    evidence, judged on their text alone, blind to tool calls and results (the window is
    dropped); else the turns it takes instead: every judged turn that is not the person's
    (an assistant restating the file a tool read, a secret a tool printed). With `strip:
    evidence` and a person to spare, only those whose own sent text carries the evidence, each
    judged alone and blind to tools: a secret a tool printed takes nothing, since tool text is
    never sent."""
    person = tuple(t for t in subject.turns if t.role == "user")
    if person and len(person) == len(subject.turns) and not subject.tool_text:
        return None  # the very turns it judged, with no tool text to be blind to: the evidence is theirs
    if person and _fires(rule, make(person, recent, window=whole).blind_to_tools()):
        return None
    others = tuple(t for t in subject.turns if t.role != "user")
    if rule.strip != "evidence" or not others or not person:
        return others  # with no words of the person's to spare, an assistant beside the evidence goes too
    carrying = tuple(t for t in others if _fires(rule, make((t,), recent, window=whole).blind_to_tools()))
    if carrying:
        return carrying
    # evidence spread over several turns' text (none carries it alone): all of them go
    return others if _fires(rule, make(others, recent, window=whole).blind_to_tools()) else ()


def _cut_spans(turns, spans):
    """Turns with every span rule's matches cut out of their text (a harness notice inside the
    person's turn): what is cut is neither judged nor sent, and a turn left blank goes.
    Returns (turns, trace lines, the first rule that cut anything)."""
    out, trace, first = [], [], None
    for turn in turns:
        text, by, folded = turn.text, None, None
        for rule in spans:
            if rule.role != "any" and rule.role != turn.role:
                continue
            marks = rule.span_marks
            if marks is not None and not any(mark in text for mark in marks):
                continue
            needs = rule.span_literals
            if needs is not None:  # most turns hold none of what a match needs: no search
                if folded is None:
                    folded = fold(text)
                if not any(literal in folded for literal in needs):
                    continue
            try:
                text, count = rule.span.subn("", text, timeout=SPAN_TIMEOUT)
            except TimeoutError:
                raise RuleTimeout(rule.id) from None
            if count:
                by, folded = by or rule.id, None
        if by is None:
            out.append(turn)
            continue
        first = first or by
        if text.strip():
            out.append(dataclasses.replace(turn, text=text.strip()))
            trace.append(f"turn {turn.index} ({turn.role}): spans cut out by {by}")
        else:
            trace.append(f"turn {turn.index} ({turn.role}) stripped by {by}: nothing left once cut")
    return tuple(out), trace, first


def _spared(rule, text: str):
    try:
        return rule.cut_lines.spared(text)
    except TimeoutError:
        raise RuleTimeout(rule.id) from None


def _fires(rule, subject) -> bool:
    try:
        return rule.fires(subject)
    except TimeoutError:
        raise RuleTimeout(rule.id) from None


class _RoleSubjects:
    """The kept turns as one subject per role scope, built on first use."""

    __slots__ = ("any", "recent", "whole", "_cache", "_make")

    def __init__(self, kept: Subject, recent, whole: Subject, make=Subject):
        self.any, self.recent, self.whole, self._cache, self._make = kept, recent, whole, {}, make

    def __getitem__(self, role: str) -> Subject:
        if role == "any":
            return self.any
        subject = self._cache.get(role)
        if subject is None:
            turns = tuple(t for t in self.any.turns if t.role == role)
            subject = self.any if len(turns) == len(self.any.turns) else self._make(turns, self.recent, window=self.whole)
            self._cache[role] = subject
        return subject
