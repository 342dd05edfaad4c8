"""The fitted revision as an edit of the old file's text: every comment, description,
example and blank line stays where it was; only the revision name, signal weights,
the lexicon's table, the level thresholds and the `fitted:` block change.

Edits are made at the spans the YAML parser reports for each value (byte-exact
round trip of everything else), applied from the end of the file backwards.
"""

from __future__ import annotations

import yaml

LEXICON_ROLE = "user"


def rewrite(text: str, *, revision: str, signal_weights: dict, thresholds: dict, points: dict | None,
            lexicon: dict | None, fitted: dict, origin: str = "") -> str:
    """`signal_weights`: id -> {type: weight} (None keeps the hand weights);
    `points`: operating points to declare when the file has none; `lexicon`:
    {"id", "base", "terms", "limit"} or None; `fitted`: the `fitted:` block's data."""
    root = yaml.compose(text, Loader=yaml.SafeLoader)  # the pure loader: its marks index characters
    top = _mapping(root)
    edits = []
    edits.append(_replace(top["revision"][1], revision))
    signals = top["signals"][1]
    lexicon_node = None
    for item in signals.value:
        fields = _mapping(item)
        sid = fields["id"][1].value
        when = _mapping(fields["when"][1])
        if lexicon is not None and sid == lexicon["id"] and "lexicon" in when:
            lexicon_node = fields
            edits.append(_replace(fields["weights"][1], flow(lexicon["base"])))
            terms_key, terms_node = _mapping(when["lexicon"][1])["terms"]
            edits.append(_replace_block(terms_key, terms_node, _terms_lines(lexicon["terms"])))
            continue
        weights = signal_weights.get(sid)
        if weights is not None:
            edits.append(_replace(fields["weights"][1], flow(weights)))
    if lexicon is not None and lexicon_node is None:
        last = signals.value[-1]
        indent = " " * (last.start_mark.column - 2)
        edits.append((_end(last), _end(last), "\n\n" + _lexicon_item(lexicon, indent)))
    flag = _mapping(top["flag"][1])
    levels = _mapping(flag["thresholds"][1])
    for level, value in thresholds.items():
        edits.append(_replace(levels[level][1], f"{value:g}"))
    if points and "operating_points" not in flag:
        key = flag["thresholds"][0]
        indent = " " * key.start_mark.column
        edits.append((_end(flag["thresholds"][1]), _end(flag["thresholds"][1]),
                      f"\n{indent}# each level's threshold is chosen by `gate fit` to keep its promise\n"
                      f"{indent}operating_points: {flow_points(points)}"))
    if origin:  # one line up top says what this file is; the old file's own comments follow as they were
        first = text.split("\n", 1)[0]
        at = len(first) + 1 if first.startswith("# yaml-language-server:") else 0
        note = (f"# revision {revision}: {origin}'s rules with weights, thresholds{' and a lexicon' if lexicon else ''} "
                f"fitted by `gate fit` (see `fitted:` at the end).\n# The comments below are {origin}'s.\n")
        edits.append((at, at, note))
    block = render_fitted(fitted)
    if "fitted" in top:
        key, value = top["fitted"]
        edits.append((key.start_mark.index, _end(value), block.rstrip("\n")))
    else:
        tail = "" if text.endswith("\n") else "\n"
        edits.append((len(text), len(text), tail + "\n" + block))
    return _apply(text, edits)


def flow(weights: dict) -> str:
    if not weights:
        return "{all_types: 0}"
    return "{" + ", ".join(f"{k}: {v:g}" for k, v in weights.items()) + "}"


def flow_points(points: dict) -> str:
    return "{" + ", ".join(f"{level}: {{{k}: {v:g}}}" for level, p in points.items() for k, v in p.items()) + "}"


def render_fitted(fitted: dict) -> str:
    body = yaml.safe_dump({"fitted": fitted}, sort_keys=False, default_flow_style=None, width=110,
                          allow_unicode=True)
    return ("# Written by `gate fit`: what the weights and thresholds above were fitted on, and their\n"
            "# cross-validated scores beside the hand weights' on the same folds. Not read by the classifier.\n"
            + body)


def key_text(term: str) -> str:
    """A term as a mapping key: plain where YAML reads it back as that string."""
    try:
        plain = yaml.safe_load(f"{term}: 0")
    except yaml.YAMLError:
        plain = None
    return term if isinstance(plain, dict) and list(plain) == [term] else "'" + term.replace("'", "''") + "'"


def _terms_lines(terms: dict) -> list[str]:
    return [f"{key_text(t)}: {flow(w)}" for t, w in terms.items()] or ["{}"]


def _lexicon_item(lexicon: dict, indent: str) -> str:
    inner = indent + "  "
    terms = lexicon["terms"]
    matches = [t for t in list(terms)[:3]] or ["(no term)"]
    lines = [
        f"{indent}# ---- learned word evidence: refit with `gate fit --lexicon N`, do not hand-edit ----",
        "",
        f"{indent}- id: {lexicon['id']}",
        f"{inner}description: >",
        f"{inner}  Words and two-word phrases fitted by `gate fit --lexicon {lexicon['limit']}` on the fixtures named",
        f"{inner}  in `fitted`, jointly with the signals' weights. Each term found in the developer's words",
        f"{inner}  adds its weights once per window; the signal's own weights are added when any term is",
        f"{inner}  found. The trace names the terms that weighed most.",
        f"{inner}role: {LEXICON_ROLE}",
        f"{inner}min_level: conservative",
        f"{inner}weights: {flow(lexicon['base'])}",
        f"{inner}when:",
        f"{inner}  lexicon:",
        f"{inner}    terms:",
    ]
    lines += [f"{inner}      {line}" for line in _terms_lines(terms)]
    lines += [
        f"{inner}examples:",
        f"{inner}  match: [{', '.join(_quoted(m) for m in matches)}]",
        f"{inner}  no_match: [{_quoted(lexicon['no_match'])}]",
    ]
    return "\n".join(lines)


def _quoted(text: str) -> str:
    return '"' + text.replace("\\", "\\\\").replace('"', '\\"') + '"'


def _mapping(node) -> dict:
    return {k.value: (k, v) for k, v in node.value}


def _end(node) -> int:
    """Where a value's text ends: a block collection's parser end runs into the next
    line, so take its last descendant's end instead."""
    while isinstance(node, (yaml.MappingNode, yaml.SequenceNode)) and not node.flow_style and node.value:
        last = node.value[-1]
        node = last[1] if isinstance(last, tuple) else last
    return node.end_mark.index


def _replace(node, new: str):
    return node.start_mark.index, _end(node), new


def _replace_block(key, node, lines: list[str]):
    """Replace a mapping's value with `lines`, one entry a line, at the entries' indentation."""
    if isinstance(node, yaml.MappingNode) and not node.flow_style and node.value:
        indent = " " * node.start_mark.column
        return node.start_mark.index, _end(node), ("\n" + indent).join(lines)
    indent = " " * (key.start_mark.column + 2)  # a flow or empty table becomes a block under its key
    return node.start_mark.index, _end(node), "\n" + indent + ("\n" + indent).join(lines)


def _apply(text: str, edits) -> str:
    edits = sorted(edits, key=lambda e: (e[0], e[1]))
    for (s1, e1, _), (s2, _, _) in zip(edits, edits[1:]):
        if s2 < e1:
            raise ValueError("overlapping edits")  # a bug here, never a user's input
    for start, end, new in reversed(edits):
        text = text[:start] + new + text[end:]
    return text
