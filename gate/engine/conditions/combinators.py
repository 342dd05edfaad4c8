"""all / any / not: structured combinators, so there is no expression parser."""

from __future__ import annotations


class All:
    __slots__ = ("parts", "required_keywords")

    def __init__(self, parts):
        # Cheap parts first would change nothing semantically; keep file order
        # so traces read like the rule, and let keyword-gated parts short-circuit.
        self.parts = tuple(parts)
        gated = [p.required_keywords for p in self.parts if p.required_keywords is not None]
        self.required_keywords = min(gated, key=len) if gated else None

    def __call__(self, subject) -> bool:
        for part in self.parts:
            if not part(subject):
                return False
        return True


class Any:
    __slots__ = ("parts", "required_keywords")

    def __init__(self, parts):
        self.parts = tuple(parts)
        keyword_sets = [p.required_keywords for p in self.parts]
        if keyword_sets and all(k is not None for k in keyword_sets):
            self.required_keywords = tuple(dict.fromkeys(k for ks in keyword_sets for k in ks))
        else:
            self.required_keywords = None

    def __call__(self, subject) -> bool:
        for part in self.parts:
            if part(subject):
                return True
        return False


class Not:
    __slots__ = ("part", "required_keywords")

    def __init__(self, part):
        self.part = part
        self.required_keywords = None

    def __call__(self, subject) -> bool:
        return not self.part(subject)


def kinds(compile_condition):
    def compile_all(spec, ctx, path):
        return All(compile_condition(c, ctx, path + (i,)) for i, c in enumerate(spec))

    def compile_any(spec, ctx, path):
        return Any(compile_condition(c, ctx, path + (i,)) for i, c in enumerate(spec))

    def compile_not(spec, ctx, path):
        return Not(compile_condition(spec, ctx, path))

    return {"all": compile_all, "any": compile_any, "not": compile_not}
