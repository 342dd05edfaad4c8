"""The pattern set (gate/engine/patternset.py) says only what `regex` would say.

For every pattern of every shipped revision, on the fixtures and a generated
corpus: an exact translation hits exactly where the pattern matches, a relaxed
one at least there, and a line form hits wherever the pattern matches one
stripped line. Text the two engines could read differently gets no answer.
"""

from __future__ import annotations

import glob
import random
import sys
from pathlib import Path

import pytest
import regex

from enginekit import (checked_share, classifier, drop_rule, engine_test_revisions, match, revision_doc,
                       user)
from gate.engine.compiler import compile_revision
from gate.engine.conditions.context import Pattern
from gate.language.loader import load_revision
from gate.engine.patternset import (SET_CHUNK, SET_MAX, WIDE, SetBuilder, SetScanner, is_plain, stand_in, translate, verifier,
                             with_stand_ins)
from gate.engine.window import normalize_window

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "benchmarks"))

from corpus import corpus, fixture_windows, not_plain  # noqa: E402

# one revision of each set of conditions (a fitted twin reads the text as its source does), at most
# eight: the newest two and a spread of the older (enginekit.engine_test_revisions)
RULES = engine_test_revisions(glob.glob(str(ROOT / "rules" / "*.yaml")))
FLAGS = regex.IGNORECASE | regex.MULTILINE


def revision_patterns(path) -> set:
    """(pattern, flags, line-judged) of every leaf pattern and every alternative of one
    (bits below are masks: a pattern cut at its gaps hits where all its pieces do)."""
    found = set()
    compiled = compile_revision(load_revision(path))

    def walk(node, lines=False):
        if isinstance(node, Pattern):
            found.add((node.pattern, node.flags & (FLAGS | regex.DOTALL), lines))
            return
        if isinstance(node, (tuple, list)):
            for item in node:
                walk(item, lines)
            return
        for name in getattr(type(node), "__slots__", ()) or getattr(node, "__dataclass_fields__", ()):
            if name not in ("keywords", "required_keywords") and hasattr(node, name):
                walk(getattr(node, name), lines or type(node).__name__ == "LineShare" and name == "pattern")

    for rule in compiled.rules:
        walk(rule)
    return found


def revision_set(rules) -> tuple:
    """(a SetBuilder holding every pattern of the revision, [(regex, bits, exact, line-judged)])."""
    builder, entries = SetBuilder(), []
    for pattern, flags, lines in sorted(revision_patterns(rules)):
        bit, exact = builder.add(pattern, flags, lines=lines)
        if bit:
            entries.append((regex.compile(pattern, flags), bit, exact, lines))
    return builder, entries


@pytest.fixture(scope="module")
def texts():
    typical, large = corpus(400, 6, seed=23)
    out = [t.text for w in fixture_windows() + typical + large for t in normalize_window(w)]
    return [t for t in out if is_plain(t) and len(t) <= SET_MAX]


@pytest.mark.heavy
@pytest.mark.parametrize("rules", RULES, ids=[Path(r).name for r in RULES])
def test_set_answers_agree_with_regex(rules, texts):
    builder, entries = revision_set(rules)
    assert len(entries) > 50  # most of a revision's patterns are in the set
    verifiers = [(regex.compile(pattern, flags), found.search)
                 for pattern, flags, lines in sorted(revision_patterns(rules))
                 if not lines and (found := verifier(pattern, flags)) is not None]
    assert verifiers
    scanner = builder.scanner()
    wrong = []
    for text in checked_share(rules, RULES, texts):
        hits = scanner.hits(text)
        assert hits is not None
        lines = [line.strip() for line in text.splitlines() if line.strip()]
        for compiled, bit, exact, by_line in entries:
            if by_line:
                matched = any(compiled.search(line) for line in lines)
            else:
                matched = compiled.search(text) is not None
            hit = hits & bit == bit  # a cut pattern hits where all its pieces do
            if (matched and not hit) or (exact and not by_line and hit and not matched):
                wrong.append((compiled.pattern[:60], text[:60], matched, hit))
        for line in lines:  # a line form on one stripped line: exact there, or at least a superset
            line_hits = scanner.hits(line)
            for compiled, bit, exact, by_line in entries:
                if by_line:
                    matched, hit = compiled.search(line) is not None, line_hits & bit == bit
                    if (matched and not hit) or (exact and hit and not matched):
                        wrong.append(("line", compiled.pattern[:60], line[:60], matched, hit))
        for compiled, search in verifiers:  # RE2 stand-ins that confirm a set hit
            if (search(text) is not None) != (compiled.search(text) is not None):
                wrong.append(("verifier", compiled.pattern[:60], text[:60]))
    assert not wrong, wrong[:5]


@pytest.mark.parametrize("text, plain", [
    ("run `make test` before you push — CI is strict → ok ✓", True),
    ("snake_case_names\tand\r\nCRLF", True),
    ("café", False),  # a non-ASCII letter: \w and case folding differ between engines
    ("ſtop", False), ("\u212a", False),  # fold to ASCII letters under IGNORECASE
    ("a\u00a0b", False), ("a\u2028b", False), ("a\x0bb", False),  # spaces only one engine sees
    ("٣", False), ("Ⓐ", False), ("\x00", False),
])
def test_plain_text(text, plain):
    assert is_plain(text) is plain


def test_text_that_is_not_plain_gets_only_a_maybe():
    builder = SetBuilder()
    bit, exact = builder.add(r"\bcafe\b", FLAGS)
    scanner = builder.scanner()
    assert exact and scanner.hits("a cafe") == bit
    assert scanner.hits("a caf\u00e9") == 0 | WIDE  # a miss still proves absence
    assert scanner.hits("a cafe\u0301") == 0 | WIDE  # a combining mark is a word character: no \b
    assert scanner.hits("un CAFE cr\u00e8me") == bit | WIDE  # a hit is only a maybe
    assert scanner.hits("cafe \ud800") == bit | WIDE  # a lone surrogate is one character too
    assert scanner.hits("x" * (SET_MAX + 1)) is None  # too long for the set: the prefilter path takes it


@pytest.fixture(scope="module")
def not_plain_texts(texts):
    rng = random.Random(3)
    out = [not_plain(text, rng) for text in texts[:250]]
    return [t for t in out if not is_plain(t)]


@pytest.mark.parametrize("rules", RULES, ids=[Path(r).name for r in RULES])
def test_wide_forms_hit_wherever_regex_matches(rules, not_plain_texts):
    """On text that is not plain, a hit is a maybe, but a miss must still prove absence."""
    builder, entries = revision_set(rules)
    scanner = builder.scanner()
    assert sum(w is not None for w in scanner.wide) > 0.9 * len(scanner.patterns)
    wrong = []
    for text in not_plain_texts:
        hits = scanner.hits(text)
        assert hits is not None and hits & WIDE
        lines = [line.strip() for line in text.splitlines() if line.strip()]
        for compiled, bit, _, by_line in entries:
            matched = (any(compiled.search(line) for line in lines) if by_line
                       else compiled.search(text) is not None)
            if matched and hits & bit != bit:
                wrong.append((compiled.pattern[:60], text[:60]))
        for line in lines:
            line_hits = scanner.hits(line)
            for compiled, bit, _, by_line in entries:
                if by_line and compiled.search(line) is not None and line_hits & bit != bit:
                    wrong.append(("line", compiled.pattern[:60], line[:60]))
    assert not wrong, wrong[:5]


@pytest.mark.parametrize("pattern, text", [
    (r"\d{3}", "build \uff11\uff12\uff13"),  # fullwidth digits are \d to `regex`
    (r"\bkill\b", "\u212aill it"),  # the Kelvin sign folds to k
    (r"\bstop\b", "\u017ftop"),  # long s folds to s
    (r"\bis\b", "th\u0130s \u0130S it"),
    (r"^done:$", "x\u2028done:\u2028"),  # a Unicode line break ends a line for str.splitlines
    (r"a\s+b", "a\u00a0b"),
    (r"come\s+back", "come \x0bback"),  # a vertical tab is a space to `regex`, not to RE2
    (r"come\s+back", "come \x85back"),
    (r"\w+@", "\u00e9t\u00e9@"),
    (r"[^\W\d]{4}", "\u00e9t\u00e9s"),
    (r"^.{0,5}:$", "\u65e5\u5fd7\u5df2:"),  # one character is one position
    (r"\u2192\s*ok", "a \u2192 ok"),
    (r"x[^ \t]y", "x\u00a0y"),  # a class that names the space its stand-in is for takes it back
    (r"\b[^_a-z\s]{2}\b", "\u00e9\u00e8"),
    (r"\bsk_[^k]\b", "sk_\u00e9"),
    (r"(?-i:[A-Z\u017f]{2})", "\u017f\u017f"),  # long s reads 's', which [A-Z] alone does not take
])
def test_wide_forms_cover_what_only_unicode_rules_match(pattern, text):
    compiled = regex.compile(pattern, FLAGS)
    matched = {False: compiled.search(text) is not None,
               True: any(compiled.search(line.strip()) for line in text.splitlines())}
    assert any(matched.values())
    for lines in (False, True):
        builder = SetBuilder()
        bit, _ = builder.add(pattern, FLAGS, lines=lines)
        assert bit and (not matched[lines] or builder.scanner().hits(text) & bit == bit), (pattern, lines)


@pytest.mark.parametrize("pattern, exact", [
    (r"\bwe\s+(?:decided|agreed)\b", True),
    (r"^\s*epoch\s+\d+/\d+", True),
    (r"a{,3}b\Z", True),  # Python's {,3} is {0,3}; \Z is RE2's \z
    (r"(?<!not\s)\bremember\b", False),  # lookbehind dropped: relaxed
    (r"\d++%", False),  # possessive made greedy
    (r"\bif\b[^.\n]{0,80},", False),  # a long bounded repeat is opened
])
def test_translation_is_exact_or_relaxed(pattern, exact):
    translation = translate(pattern, FLAGS)
    assert translation is not None and translation.exact is exact


@pytest.mark.parametrize("pattern", [r"(\w+)\s+\1", r"\p{Lu}\w+", r"[[:alpha:]]+", r"(?P<x>a)(?P=x)"])
def test_patterns_the_set_cannot_read_stay_out(pattern):
    assert translate(pattern, FLAGS) is None
    assert SetBuilder().add(pattern, FLAGS) == (0, False)


def test_a_scan_matching_nothing_is_zero_not_unknown():
    """The sentinel pattern tells "no pattern matched" from "the scan failed"."""
    builder = SetBuilder()
    builder.add(r"\bdeploy\b", FLAGS)
    scanner = builder.scanner()
    assert scanner.hits("nothing here") == 0
    rebuilt = SetScanner(scanner.patterns, scanner.groups, scanner.wide)  # it pickles by its patterns
    assert rebuilt.hits("we deploy on friday") == 1 << 1
    assert rebuilt.hits("we d\u00e9ploy on friday") == WIDE


@pytest.mark.parametrize("pattern, same_as", [
    (r"(?:\w[\w.-]*\s+){0,3}(?:eta|remaining)\b", r"(?:eta|remaining)\b"),  # a counted run of words before
    (r"\d+\s*ms(?:\s+each|\s+per\s+call)?", r"\d+\s*ms"),  # an optional tail
    (r"(?:about\s+|~)?\d+%", r"\d+%"),
])
def test_a_pieces_optional_edges_are_left_out_and_it_stays_exact(pattern, same_as):
    """Where a pattern is in a text does not depend on its optional edges, and in a set they
    multiply the DFA's states."""
    assert translate(pattern, FLAGS) == translate(same_as, FLAGS)
    assert translate(pattern, FLAGS).exact


@pytest.mark.parametrize("pattern", [r"^(?:\w+\s+){0,3}eta", r"a*+a", r"(?<=x)y?z"])
def test_edges_that_constrain_a_match_stay(pattern):
    """An anchor before the optional part, or a possessive repeat that gives nothing back,
    decides where the rest may match."""
    translation = translate(pattern, FLAGS)
    assert translation is not None
    compiled = regex.compile(pattern, FLAGS)
    builder = SetBuilder()
    bit, _ = builder.add(pattern, FLAGS)
    scanner = builder.scanner()
    for text in ("aa", "xz", "z", "yz", "eta", "one two eta", "x yz"):
        hit = scanner.hits(text) & bit == bit
        assert hit or compiled.search(text) is None, (pattern, text)
        if translation.exact:
            assert hit == (compiled.search(text) is not None), (pattern, text)


def test_a_group_larger_than_one_set_is_scanned_as_several():
    """Each RE2 set holds at most SET_CHUNK pieces; the bits of every set come back together."""
    builder = SetBuilder()
    words = [f"word{i:03d}" for i in range(SET_CHUNK * 2 + 5)]
    bits = [builder.add(rf"\b{w}\b", FLAGS)[0] for w in words]
    scanner = builder.scanner()
    text = " ".join(words[::SET_CHUNK - 1])
    expected = 0
    for w, bit in zip(words, bits):
        if w in text.split():
            expected |= bit
    assert scanner.hits(text) == expected
    assert len(scanner._built["window"]) == 3
    assert scanner.hits("none of them") == 0


def test_an_exactly_translated_pattern_never_reaches_the_backtracking_engine():
    """(x+x+)+y backtracks for ages in `regex`; RE2 proves in one pass that it does not match."""
    judge = classifier(revision_doc([drop_rule("slow", match(r"(x+x+)+y"))])).classify
    judge([user("warm-up: the set is built from the second window on")])
    decision = judge([user("x" * 2000)])
    assert decision.error is None and decision.rule is None


def test_one_window_does_not_build_the_set():
    """Building the set costs more than it saves on a single window (an editor hook)."""
    judge = classifier(revision_doc([drop_rule("loss", match(r"\bloss\b"))]))
    judge.classify([user("loss went down")])
    assert not judge.sets.built
    judge.classify([user("loss went down")])
    assert judge.sets.built


def test_without_re2_the_classifier_decides_the_same(monkeypatch, texts):
    import gate.engine.patternset as patternset

    revision = load_revision(RULES[-1])
    windows = [[user(text)] for text in texts[:300]]
    with_set = compile_revision(revision)
    expected = [(d.action, d.trace, d.error) for d in map(with_set.classify, windows)]
    assert with_set.sets.built
    monkeypatch.setattr(patternset, "_re2", None)
    without = compile_revision(revision)
    assert without.sets is None or without.sets.hits("a plain text") is None
    assert [(d.action, d.trace, d.error) for d in map(without.classify, windows)] == expected


@pytest.mark.parametrize("text", [
    "plain words, one caf\u00e9 and a \x0b tab",  # few such characters: only they are visited
    "\u65e5\u5fd7\u5df2\u8f6e\u6362 \u90e8\u7f72\u5b8c\u6210 \ud800 \u212a " * 40,  # many: one pass over all
])
def test_stand_ins_are_the_same_whichever_way_the_text_is_read(text):
    expected = "".join(stand_in(ch) if ch >= "\x80" or ch == "\x0b" else ch for ch in text)
    assert with_stand_ins(text) == expected
    assert expected.isascii() and len(expected) == len(text)
