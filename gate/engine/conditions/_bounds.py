"""Inclusive min/max checks shared by the counting kinds."""


def within(value, spec: dict) -> bool:
    return ("min" not in spec or value >= spec["min"]) and ("max" not in spec or value <= spec["max"])
