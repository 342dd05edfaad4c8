"""`gate lint`: a revision is proven before it ships.

Checks, each a located Problem: the schema and references (loader), every
pattern compiles (compiler), every rule matches its `match` examples and
spares its `no_match` ones, neither the keyword prefilter nor the optimized
classifier (derived literals, the RE2 pattern set) changes an example's
outcome, every pattern leaf matches at least one of its rule's examples (so it
is not dead), no pattern backtracks catastrophically on adversarial input, a
lexicon sits only as a signal's whole `when`, with terms the matcher can find,
and a payload rule judging only the person's turns has no tool_io (blind to it).
"""

from __future__ import annotations

import time

import regex

from gate.engine.compiler import compile_revision, compile_rule
from gate.engine.conditions import CompileContext
from gate.engine.conditions.lexicon import term_problems
from gate.language.errors import GateError, Problem
from gate.engine.features import Subject
from gate.language.loader import load_revision, walk_conditions
from gate.language.model import SPARE_OPTIONS
from gate.engine.window import normalize_window
from gate.evaluation import lint_cache

PATTERN_BUDGET = 0.1  # CPU seconds one adversarial input may take (4,000 characters)
_ADVERSARIAL_LENGTH = 4000


def lint_file(path: str) -> list[Problem]:
    try:
        revision = load_revision(path)
        rules = [(r, compile_rule(r, revision), compile_rule(r, revision, prefilter=False)) for r in revision.rules]
        optimized = compile_revision(revision)
    except GateError as exc:
        return exc.problems
    problems = []
    for (rule, fast, exhaustive), engine in zip(rules, optimized.rules):
        problems += _example_problems(revision, rule, fast, exhaustive, (engine, optimized))
        problems += _pattern_problems(revision, rule)
        problems += _lexicon_problems(revision, rule)
        problems += _payload_problems(revision, rule)
    problems += _marker_problems(revision)
    return problems


def example_window(example) -> tuple[tuple, frozenset]:
    """An example's turns and the shapes of its `recent` windows."""
    recent = ()
    if isinstance(example, dict) and "window" in example:
        recent = tuple(Subject(_turns(w)).window_shape for w in example.get("recent", ()))
        example = example["window"]
    return _turns(example), frozenset(recent)


def _turns(window) -> tuple:
    window = window if isinstance(window, list) else [window]
    return normalize_window([_repeated(turn) for turn in window])


def _repeated(turn):
    """A turn with `repeat: N` has its content N times, one per line (examples about size)."""
    if not (isinstance(turn, dict) and "repeat" in turn):
        return turn
    rest = {k: v for k, v in turn.items() if k != "repeat"}
    return {**rest, "content": "\n".join([str(turn["content"])] * turn["repeat"])}


def example_subjects(rule, example, classifier=None):
    """The subjects a rule judges for one example, as the classifier would build them
    (with its prefilter scanner and pattern set, when given the classifier)."""
    turns, recent = example_window(example)
    whole = (Subject(turns, recent, scanner=classifier.scanner, sets=classifier.sets) if classifier is not None
             else Subject(turns, recent))
    if rule.scope == "turn":
        return [Subject((t,), recent, window=whole) for t in turns if rule.role in ("any", t.role)]
    chosen = tuple(t for t in turns if rule.role in ("any", t.role))
    return [Subject(chosen, recent, window=whole)] if chosen else []


def rule_fires_on(rule, compiled, example, classifier=None) -> bool:
    return any(compiled.fires(s) for s in example_subjects(rule, example, classifier))


def _example_problems(revision, rule, fast, exhaustive, optimized) -> list[Problem]:
    """`optimized`: (the rule compiled in the optimized classifier, that classifier)."""
    problems = []
    located = revision.source
    kind = "signal" if rule.path[0] == "signals" else "rule"
    for expected, examples in ((True, rule.examples.match), (False, rule.examples.no_match)):
        field = "match" if expected else "no_match"
        for i, example in enumerate(examples):
            where = rule.path + ("examples", field, i)
            try:
                fired = rule_fires_on(rule, fast, example)
                unfiltered = rule_fires_on(rule, exhaustive, example)
                engine = rule_fires_on(rule, optimized[0], example, optimized[1])
            except TimeoutError:
                problems.append(located.problem(where, f"{kind} '{rule.id}': a pattern timed out on this example"))
                continue
            if fired != unfiltered:
                problems.append(located.problem(where, f"{kind} '{rule.id}': the keyword prefilter changes this "
                                                       "example's outcome; add the missing keyword"))
            elif engine != unfiltered:
                problems.append(located.problem(where, f"{kind} '{rule.id}': the optimized classifier (derived "
                                                       "literals, pattern set) decides this example differently; "
                                                       "an engine bug: keep the example and report it"))
            if fired != expected:
                verb = "does not match" if expected else "matches"
                problems.append(located.problem(where, f"{kind} '{rule.id}': {verb} its {field} example "
                                                       f"{_preview(example)}"))
    return problems


def _leaf_patterns(revision, rule):
    """(path, compiled regex, the example text it must match or None) for every pattern of a rule."""
    kind = "signal" if rule.path[0] == "signals" else "rule"
    ctx = CompileContext(revision.vocabularies, revision.fragments, revision.source, rule_id=rule.id, rule_kind=kind)
    raw = revision.source.data["drop_rules" if rule.path[0] == "drop_rules" else "signals"][rule.path[1]]
    for path, condition in walk_conditions(raw, rule.path):
        kind, spec = next(iter(condition.items()))
        if isinstance(spec, dict) and "pattern" in spec:
            # tool_io looks at tool calls and results; every other kind at the turns' text
            yield path + (kind,), ctx.regex(spec, path + (kind,)), "tool_text" if kind == "tool_io" else "text"
        for part in ("ignore", "miss", "spare", "spare_within"):  # lines a line_share or repeated_shape sets apart
            if isinstance(spec, dict) and part in spec:
                yield path + (kind, part), ctx.regex({"pattern": spec[part]}, path + (kind, part)), None
    for key in ("spare", "spare_outside_fence"):  # a payload rule's: the person's lines it keeps
        if rule.path[0] == "drop_rules" and key in raw:
            yield rule.path + (key,), ctx.regex({"pattern": raw[key]}, rule.path + (key,)), None
    if rule.path[0] == "drop_rules" and isinstance(raw.get("spare_above_file"), dict):
        for part, pattern in raw["spare_above_file"].items():
            path = rule.path + ("spare_above_file", part)
            yield path, ctx.regex({"pattern": pattern}, path), None


def _pattern_problems(revision, rule) -> list[Problem]:
    problems = []
    kind = "signal" if rule.path[0] == "signals" else "rule"
    subjects = [Subject(example_window(e)[0]) for e in rule.examples.match + rule.examples.no_match]
    texts = {"text": [s.text for s in subjects], "tool_text": [s.tool_text for s in subjects]}
    for path, pattern, must_match in _leaf_patterns(revision, rule):
        slow = _adversarial_verdict(pattern)
        if slow is not None:
            problems.append(revision.source.problem(path, f"{kind} '{rule.id}': pattern backtracks catastrophically "
                                                          f"({slow}); rewrite it without nested quantifiers"))
            continue
        if must_match and not any(pattern.search(text, timeout=PATTERN_BUDGET) for text in texts[must_match]):
            problems.append(revision.source.problem(path, f"{kind} '{rule.id}': this pattern matches none of the "
                                                          "rule's examples; it may never match (add an example)"))
    return problems


def _lexicon_problems(revision, rule) -> list[Problem]:
    """A lexicon only as the whole `when` of a signal (where its terms' weights are what
    the signal scores); terms the matcher can find, weights for the revision's types."""
    kind = "signal" if rule.path[0] == "signals" else "rule"
    raw = revision.source.data[rule.path[0]][rule.path[1]]
    problems = []
    for path, condition in walk_conditions(raw, rule.path):
        if "lexicon" not in condition:
            continue
        if kind != "signal" or path != rule.path + ("when",):
            problems.append(revision.source.problem(path + ("lexicon",), f"{kind} '{rule.id}': a lexicon must be "
                                                    "the whole `when` of a signal (its terms' weights are the score)"))
            continue
        terms = condition["lexicon"]["terms"]
        for term, message in term_problems(terms):
            problems.append(revision.source.problem(path + ("lexicon", "terms", term), f"signal '{rule.id}': "
                                                    f"lexicon term {term!r}: {message}", at_key=True))
        for term, weights in terms.items():
            for type_name in weights:
                if type_name not in revision.categories:
                    problems.append(revision.source.problem(path + ("lexicon", "terms", term, type_name),
                                                            f"signal '{rule.id}': lexicon term {term!r} weighs "
                                                            f"'{type_name}', which is not in categories", at_key=True))
    return problems


def _payload_problems(revision, rule) -> list[Problem]:
    """A payload rule judges the person's turns blind to tool calls and results, and what a
    tool read may only strip the other turns: with role user, a tool_io condition can never act.
    `strip` says which of those other turns go, `spare` which of the person's lines stay when the
    evidence is theirs (`spare_outside_fence`: also outside a fenced paste; `spare_unflagged`: what
    becomes of them unflagged; `spare_continuations`: a wrapped line goes with the line above;
    `spare_above_file`: a line above the file's title), so
    none of them means anything outside a payload rule."""
    if rule.path[0] != "drop_rules":
        return []
    if rule.scope != "payload":
        raw = revision.source.data["drop_rules"][rule.path[1]]
        return [revision.source.problem(rule.path + (key,), f"rule '{rule.id}': {key} applies to scope payload "
                                        f"only (this rule's scope is {rule.scope}); remove it")
                for key in ("spare", *SPARE_OPTIONS) if key in raw]
    raw = revision.source.data["drop_rules"][rule.path[1]]
    problems = []
    for key in SPARE_OPTIONS:
        if key != "strip" and key in raw and "spare" not in raw:  # strip is about the other turns
            problems.append(revision.source.problem(rule.path + (key,), f"rule '{rule.id}': {key} says what a "
                                                    "spare keeps or what becomes of it; add a spare or remove it"))
    if rule.role != "user":
        return problems
    return problems + [
        revision.source.problem(path + ("tool_io",), f"rule '{rule.id}': a payload rule with role user never acts "
                                "on tool_io (tool evidence only strips the assistant's turns); use role any or a "
                                "turn rule for the assistant")
        for path, condition in walk_conditions(raw, rule.path) if "tool_io" in condition]


def _marker_problems(revision) -> list[Problem]:
    problems = []
    for index, marker in enumerate(revision.noise_markers):
        slow = _adversarial_verdict(regex.compile(marker.pattern, regex.IGNORECASE | regex.MULTILINE))
        if slow is not None:
            problems.append(revision.source.problem(("noise_markers", index, "pattern"),
                                                    f"noise marker '{marker.id}': pattern backtracks catastrophically ({slow})"))
    return problems


def adversarial_inputs(pattern_text: str):
    """Long runs of the characters a pattern cares about, ending in a mismatch:
    the inputs on which nested quantifiers explode."""
    literals = {c for c in pattern_text if c.isalnum() or c in " -_./:=,@"}
    alphabet = sorted(literals | {"a", "0", " ", "\n", "."})[:24]
    for c in alphabet:
        yield c * _ADVERSARIAL_LENGTH + "\x00!"
    for a in alphabet[:10]:
        for b in alphabet[:10]:
            if a != b:
                yield (a + b) * (_ADVERSARIAL_LENGTH // 2) + "\x00!"


def _adversarial_verdict(pattern) -> str | None:
    """_slowest_adversarial, skipped for a pattern that finished within budget before (with this
    very code); only a pass is remembered, so a slow pattern is searched, and reported, each time."""
    if lint_cache.is_known_fast(pattern.pattern, pattern.flags):
        return None
    slow = _slowest_adversarial(pattern)
    if slow is None:
        lint_cache.remember_fast(pattern.pattern, pattern.flags)
    return slow


def _slowest_adversarial(pattern) -> str | None:
    """The first adversarial input the pattern cannot finish within budget.

    Time is the search's own CPU time, not the wall clock's: on a machine whose
    cores are all busy (the test suite runs on every one) a pattern within budget
    read 4% over it. A slow run is retried, and only the best of three counts;
    a catastrophic pattern is slow every time.
    """
    for text in adversarial_inputs(pattern.pattern):
        best = _timed_search(pattern, text)
        if best > PATTERN_BUDGET:
            best = min(best, _timed_search(pattern, text), _timed_search(pattern, text))
        if best > PATTERN_BUDGET:
            shown = "over" if best == float("inf") else f"{best * 1000:.0f} ms,"
            return f"{shown} {PATTERN_BUDGET * 1000:.0f} ms budget on {_preview(text)}"
    return None


def _timed_search(pattern, text) -> float:
    started = time.thread_time()
    try:
        pattern.search(text, timeout=PATTERN_BUDGET * 4)  # wall clock: what the classifier would wait
    except TimeoutError:
        return float("inf")
    return time.thread_time() - started


def _preview(example) -> str:
    text = example if isinstance(example, str) else repr(example)
    text = text.replace("\n", "\\n")
    return repr(text[:40] + ("…" if len(text) > 40 else ""))
