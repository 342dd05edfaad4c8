"""recent_shape: the window's shape was seen recently (shapes passed in by the caller)."""

KIND = "recent_shape"


def compile(spec, ctx, path):
    def recent_shape(subject) -> bool:
        return bool(subject.recent_shapes) and subject.window_shape in subject.recent_shapes

    recent_shape.required_keywords = None
    return recent_shape
