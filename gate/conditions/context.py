"""What compiling a condition needs: named patterns, switches, error places."""

from __future__ import annotations

from dataclasses import dataclass

import regex

from gate.errors import GateError
from gate.patterns import ReferenceError_, expand, expand_keywords

DEFAULT_TIMEOUT = 0.05  # seconds per regex call: a catastrophic pattern cannot hang a hook


@dataclass
class CompileContext:
    vocabularies: dict
    fragments: dict
    located: object  # gate.yamlsource.Located, for error places
    rule_id: str = ""
    rule_kind: str = "rule"  # 'rule' or 'signal', as the loader names them in errors
    prefilter: bool = True
    timeout: float = DEFAULT_TIMEOUT

    def fail(self, path, message: str) -> GateError:
        return GateError(self.located.problem(path, f"{self.rule_kind} '{self.rule_id}': {message}"))

    def regex(self, spec: dict, path: tuple):
        """The leaf's pattern(s) as one compiled regex (alternatives OR-ed)."""
        patterns = spec["pattern"] if isinstance(spec["pattern"], list) else [spec["pattern"]]
        flags = regex.MULTILINE  # ^ and $ are line anchors: most noise is line-shaped
        if not spec.get("case_sensitive", False):
            flags |= regex.IGNORECASE
        parts = []
        for i, text in enumerate(patterns):
            where = path + ("pattern",) + ((i,) if isinstance(spec["pattern"], list) else ())
            try:
                expanded = expand(text, self.vocabularies, self.fragments)
                regex.compile(expanded, flags)
            except ReferenceError_ as exc:
                raise self.fail(where, str(exc)) from None
            except regex.error as exc:
                raise self.fail(where, f"pattern does not compile: {exc}") from None
            parts.append(expanded)
        combined = parts[0] if len(parts) == 1 else "|".join(f"(?:{p})" for p in parts)
        return regex.compile(combined, flags)

    def keywords(self, spec: dict, path: tuple):
        """Prefilter literals, or None when the leaf has none (or prefiltering is off)."""
        if not self.prefilter or "keywords" not in spec:
            return None
        try:
            return expand_keywords(spec["keywords"], self.vocabularies)
        except ReferenceError_ as exc:
            raise self.fail(path + ("keywords",), str(exc)) from None
