"""A small rules revision for the evaluator's tests (eval, diff, metrics).

One heartbeat drop rule and two signals ('prefer' at every level, 'decided'
from balanced up): enough to move every metric in both directions.
"""

import textwrap

TEMPLATE = textwrap.dedent(r"""
    schema_version: 1
    revision: __REVISION__
    description: evaluator test rules
    levels: [conservative, balanced, aggressive]
    default_level: balanced
    vocabularies:
      hb_terms: {description: heartbeat words, terms: [epoch, eta, loss]}
    fragments:
      num: {description: a number, pattern: '\d+(?:\.\d+)?'}
    drop_rules:
      - id: heartbeat
        description: progress lines
        scope: turn
        role: any
        min_level: conservative
        when:
          line_share: {pattern: '\b{{hb_terms}}\b.*{{num}}', keywords: ['{{hb_terms}}'], min_share: 0.6}
        examples:
          match: ["Epoch 3/10 loss 0.41 ETA 5m"]
          no_match: ["We use epoch timestamps in the API."]
    __EXTRA_DROP_RULES__
    signals:
      - id: prefer
        description: prefers
        role: user
        min_level: conservative
        weights: {preference: 4}
        when: {match: {pattern: '\bi prefer\b', keywords: [prefer]}}
        examples:
          match: ["I prefer small PRs"]
          no_match: ["The assistant prefers nothing"]
      - id: decided
        description: a decision
        role: user
        min_level: balanced
        weights: {decision: 4}
        when: {match: {pattern: '\bwe decided\b', keywords: [decided]}}
        examples:
          match: ["We decided to use Postgres"]
          no_match: ["nothing decided yet"]
    flag:
      thresholds: {conservative: 5, balanced: 3, aggressive: 2}
    categories: {preference: a standing preference, decision: a decision, insight: an insight}
    instructions: Store only durable facts.
    noise_markers: [{id: epoch, description: epoch, pattern: '\bepoch\b'}]
    thresholds: __THRESHOLDS__
""")


def rules_text(thresholds: dict, extra_drop_rules: str = "", revision: str = "t1") -> str:
    """The test revision with these floors (as a YAML flow mapping) and any extra drop rules."""
    floors = "{" + ", ".join(f"{name}: {value}" for name, value in thresholds.items()) + "}"
    return (TEMPLATE.replace("__THRESHOLDS__", floors).replace("__EXTRA_DROP_RULES__", extra_drop_rules)
            .replace("__REVISION__", revision))
