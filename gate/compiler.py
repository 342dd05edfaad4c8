"""Validated Revision -> Classifier: every condition compiled once, up front."""

from __future__ import annotations

from dataclasses import dataclass

from gate.conditions import CompileContext, compile_condition
from gate.conditions.context import DEFAULT_TIMEOUT
from gate.model import Signal


@dataclass(frozen=True)
class CompiledRule:
    id: str
    kind: str  # 'drop' | 'signal'
    scope: str  # 'turn' | 'window'
    role: str  # 'user' | 'assistant' | 'any'
    min_index: int  # position of min_level in the revision's levels
    mandatory: bool
    when: object
    unless: tuple
    weights: dict  # signals only
    required_keywords: tuple | None  # one of these must be in the text, or the rule cannot fire

    def fires(self, subject) -> bool:
        if self.required_keywords is not None:
            lower = subject.lower
            if not any(k in lower for k in self.required_keywords):
                return False
        if not self.when(subject):
            return False
        for condition in self.unless:
            if condition(subject):
                return False
        return True

    def active_at(self, level_index: int) -> bool:
        return self.mandatory or level_index >= self.min_index


def compile_rule(rule, revision, *, prefilter: bool = True, timeout: float = DEFAULT_TIMEOUT) -> CompiledRule:
    ctx = CompileContext(revision.vocabularies, revision.fragments, revision.source,
                         rule_id=rule.id, rule_kind="signal" if isinstance(rule, Signal) else "rule",
                         prefilter=prefilter, timeout=timeout)
    when = compile_condition(rule.when, ctx, rule.path + ("when",))
    unless = tuple(compile_condition(c, ctx, rule.path + ("unless", i)) for i, c in enumerate(rule.unless))
    is_signal = isinstance(rule, Signal)
    return CompiledRule(
        id=rule.id, kind="signal" if is_signal else "drop", scope=rule.scope, role=rule.role,
        min_index=revision.levels.index(rule.min_level), mandatory=rule.mandatory, when=when,
        unless=unless, weights=dict(rule.weights) if is_signal else {},
        required_keywords=when.required_keywords if prefilter else None,
    )


def compile_revision(revision, *, prefilter: bool = True, timeout: float = DEFAULT_TIMEOUT):
    """Compile every rule; raises GateError (located) for a pattern that does not compile."""
    from gate.classify import Classifier

    rules = tuple(compile_rule(r, revision, prefilter=prefilter, timeout=timeout) for r in revision.rules)
    return Classifier(revision, rules)
