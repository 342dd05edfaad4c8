"""Condition kinds: a fixed set, one small module each, one generic engine.

Each kind module defines `KIND` and `compile(spec, ctx, path) -> Condition`.
A Condition is a callable `(Subject) -> bool` with `required_keywords`: a tuple
of literals one of which must be in the text for it to be true, or None when
it can be true without any (the classifier uses this to skip rules cheaply).
Adding a kind is adding one module here and one branch in the rules schema.
"""

from __future__ import annotations

from gate.engine.conditions import (chars, combinators, count, lexicon, line_share, match, prose_words,
                             recent_shape, repeated_shape, role, structure, tool_io, turn_flag, turns)
from gate.engine.conditions.context import CompileContext

_MODULES = (match, count, line_share, prose_words, chars, turns, role, turn_flag, structure,
            repeated_shape, recent_shape, tool_io, lexicon)
REGISTRY = {module.KIND: module.compile for module in _MODULES}
REGISTRY.update(combinators.kinds(lambda spec, ctx, path: compile_condition(spec, ctx, path)))


def compile_condition(condition: dict, ctx: CompileContext, path: tuple):
    kind, spec = next(iter(condition.items()))
    return REGISTRY[kind](spec, ctx, path + (kind,))


__all__ = ["CompileContext", "REGISTRY", "compile_condition"]
