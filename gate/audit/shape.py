"""A memory's shape: its text with everything that varies between frames of one heartbeat collapsed.

Two frames of one training heartbeat differ in numbers, ids, hashes, paths, times and spacing,
never in their words: `Epoch 3/10 loss=0.41 ETA 12m` and `epoch 7/10 - loss: 0.18 - ETA 3m`
have one shape, `epoch <n> loss <n> eta <n>`. Different facts keep different words, so they
keep different shapes. Exact shapes group most near-duplicates; `signature` gives the LSH band
keys that find the rest (a field added or missing) by token-set similarity.

Pure functions, called once per memory in a worker process: each pass is guarded by a cheap
substring test, because one `re` pass over a memory costs a few microseconds.
"""

from __future__ import annotations

import hashlib
import re
import struct

_URL = re.compile(r"\b(?:https?|ftp|file)://\S+")
_EMAIL = re.compile(r"[\w.+-]+@[\w-]+(?:\.[\w-]+)+")
_UUID = re.compile(r"\b[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}\b")
_TIME = re.compile(r"\d{4}-\d\d-\d\d(?:[t ]\d\d?:\d\d(?::\d\d(?:[.,]\d+)?)?(?:z|[+-]\d\d:?\d\d)?)?"
                   r"|\d\d?:\d\d(?::\d\d(?:[.,]\d+)?)?(?: ?[ap]m\b)?")
_HEX = re.compile(r"\b(?:0x[0-9a-f]+|[0-9a-f]{7,})\b")
# Cheap tests of what a pass needs before it runs, on the text's bytes read through a table:
# a _TIME match holds "d:dd" or "dddd-dd-dd" (d: an ASCII digit, the only digits of ASCII
# text), a _HEX match "0x" or seven hex characters in a row ("hhhhhhh").
_TIME_MARKS = bytes(ord("d") if chr(i).isdigit() and i < 128 else (i if chr(i) in ":-" else ord(" "))
                    for i in range(256))
_CUTS = bytes(i if chr(i).isalnum() or chr(i) in "<>" else ord(" ") for i in range(128)) + bytes(128)
_HEX_MARKS = bytes(ord("h") if chr(i) in "0123456789abcdef" else ord(" ") for i in range(256))
_RATE = re.compile(r"\d[\d,_.]*\s?[a-z]{0,7}/(?:s|sec|min|h|step|it)\b")
_PATH = re.compile(r"(?:~|\.{1,2})?/?(?:[\w.@+-]+/)+[\w.@+-]*")
# a number with decimals, an exponent and a unit glued on (12ms, 3.4gb, 98%, 2e-4)
_NUMBER = re.compile(r"\d[\d,_]*(?:\.\d+)?(?:e[-+]?\d+)?(?:[a-z%µ]{1,3}(?![a-z]))?")
_TOKEN = re.compile(r"<[a-z]+>|[^\W_]+")
_PLACEHOLDER_RUN = re.compile(r"(<[a-z]+>)(?: \1)+")
_LETTER = re.compile(r"[a-z]")
_DIGIT = re.compile(r"\d")
_HEX_LETTERS = frozenset("abcdef")


def _hex(m: re.Match) -> str:
    token = m.group()
    if token.startswith("0x") or (not token.isdigit() and not token.isalpha()
                                  and any(c in _HEX_LETTERS for c in token)):
        return " <hash> "
    return token  # a plain number or an English word made of a-f (decade, facade)


def _path(m: re.Match) -> str:
    token = m.group()
    if _LETTER.search(token) and ("/" in token.strip("/.~") or token.startswith(("/", "~/", "./", "../"))):
        return " <path> "
    return token  # 3/10 is a fraction, not a path: the numbers pass takes it


def shape(text: str) -> str:
    """The lower-cased word sequence of `text` with urls, emails, ids, times, hashes, paths and
    numbers collapsed into placeholders (a run of one placeholder is one)."""
    s = text.lower()
    if "://" in s:
        s = _URL.sub(" <url> ", s)
    if "@" in s:
        s = _EMAIL.sub(" <email> ", s)
    ascii_ = s.isascii()
    marks = s.encode("ascii").translate(_TIME_MARKS) if ascii_ else None
    # ids, times, hashes, rates and numbers all hold a digit
    digits = b"d" in marks if ascii_ else _DIGIT.search(s) is not None
    if digits and s.count("-") >= 4:
        s = _UUID.sub(" <id> ", s)
        marks = s.encode("ascii").translate(_TIME_MARKS) if ascii_ else None
    if digits and (b"d:dd" in marks or b"dddd-dd-dd" in marks if ascii_ else ":" in s or "-" in s):
        s = _TIME.sub(" <time> ", s)
    if digits and ("0x" in s or b"hhhhhhh" in s.encode("ascii", "replace").translate(_HEX_MARKS)):
        s = _HEX.sub(_hex, s)
    if "/" in s:
        if digits:
            s = _RATE.sub(" <rate> ", s)
        s = _PATH.sub(_path, s)
    if digits:
        s = _NUMBER.sub(" <n> ", s)
    if ascii_:
        out = " ".join(_words(s))
    else:
        out = " ".join(_TOKEN.findall(s))
    return _PLACEHOLDER_RUN.sub(r"\1", out) if "<" in out else out


def reference_shape(text: str) -> str:
    """shape without its shortcuts: every pass over the whole text, in order, those of ids,
    times, hashes, rates and numbers only in a text with a digit (what the shortcuts must
    equal; a test compares them)."""
    s = _URL.sub(" <url> ", text.lower())
    s = _EMAIL.sub(" <email> ", s)
    digits = _DIGIT.search(s) is not None
    if digits:
        s = _HEX.sub(_hex, _TIME.sub(" <time> ", _UUID.sub(" <id> ", s)))
        s = _RATE.sub(" <rate> ", s)
    s = _PATH.sub(_path, s)
    if digits:
        s = _NUMBER.sub(" <n> ", s)
    return _PLACEHOLDER_RUN.sub(r"\1", " ".join(_TOKEN.findall(s)))


def _words(s: str) -> list:
    """_TOKEN.findall(s) for ASCII text, most of it without a regex: no token spans a
    character that is neither a letter, a digit nor an angle bracket, so the text is cut
    there first and only the pieces holding a bracket are searched."""
    out = []
    for piece in s.encode("ascii").translate(_CUTS).decode("ascii").split():
        if "<" in piece or ">" in piece:
            out += _TOKEN.findall(piece)
        else:
            out.append(piece)
    return out


def _blake64(text: str) -> int:
    return int.from_bytes(hashlib.blake2b(text.encode("utf-8", "surrogatepass"), digest_size=8).digest(),
                          "big", signed=True)


def shape_key(shape_text: str) -> int:
    """A stable signed 64-bit id of a shape: the same in every process and run (a SQLite INTEGER)."""
    return _blake64(shape_text)


# -- similarity: MinHash over the shape's content tokens, banded for LSH ----------------------

BINS = 12  # min-hashes per signature
ROWS = 2  # min-hashes per band: two shapes share a band with probability J^2
BANDS = BINS // ROWS  # so they become candidates with probability 1 - (1 - J^2)^6 (0.998 at J = 0.8)
MIN_SIMILAR_TOKENS = 3  # shapes with fewer content tokens are grouped by exact shape only
# Words in nearly every sentence: two unrelated facts share them, so they are left out of the
# similarity (they would put every fact in one LSH bucket and say nothing about sameness).
STOPWORDS = frozenset(
    "a an and are as at be been but by can do does for from had has have he her his i if in into is it its "
    "me my no not now of on or our she so than that the their them then there these they this to too us "
    "was we were what when which who will with would you your".split())
_UNPACK = struct.Struct(f">{BINS}I").unpack

_token_hashes: dict = {}


def _token_hashes_of(token: str) -> tuple:
    """BINS independent 32-bit hashes of a token, one blake2b digest cut in pieces (cached)."""
    h = _token_hashes.get(token)
    if h is None:
        if len(_token_hashes) > 200_000:  # bounded: words repeat across memories, ids do not
            _token_hashes.clear()
        digest = hashlib.blake2b(token.encode("utf-8", "surrogatepass"), digest_size=4 * BINS).digest()
        h = _token_hashes[token] = _UNPACK(digest)
    return h


def signature(shape_text: str) -> tuple | None:
    """BANDS LSH keys of the shape's content-token set, or None when it is too short to compare.

    Min-hash i is the least i-th hash over the tokens; a band key is the hash of ROWS of them.
    Integer tuples hash the same in every process, so workers agree on the keys."""
    tokens = token_set(shape_text)
    if len(tokens) < MIN_SIMILAR_TOKENS:
        return None
    cached = _token_hashes.get
    mins = list(map(min, zip(*[cached(t) or _token_hashes_of(t) for t in tokens])))
    # band b's key: hash((b, mins[b * ROWS], ..., mins[b * ROWS + ROWS - 1]))
    return tuple(map(hash, zip(range(BANDS), *(mins[row::ROWS] for row in range(ROWS)))))


def token_set(shape_text: str) -> frozenset:
    """The shape's content tokens (stopwords left out), as similarity compares them."""
    return frozenset(shape_text.split()) - STOPWORDS


def similar(a: frozenset, b: frozenset, threshold: float) -> bool:
    """Jaccard(a, b) >= threshold, without building the union (and mostly without the
    intersection: the similarity can be no more than the smaller size over the larger)."""
    la, lb = len(a), len(b)
    if la > lb:
        la, lb = lb, la
    if not lb:
        return True
    if la < threshold * lb:
        return False
    inter = len(a & b)
    return inter >= threshold * (la + lb - inter)
