"""recent_shape: the window's shape was seen recently (shapes passed in by the caller)."""

KIND = "recent_shape"


def compile(spec, ctx, path):
    def recent_shape(subject) -> bool:
        # The whole window's shape, as Decision.shape reports it to the caller,
        # not the shape of what is left after noise was stripped.
        whole = subject.window if subject.window is not None else subject
        return bool(subject.recent_shapes) and whole.window_shape in subject.recent_shapes

    recent_shape.required_keywords = None
    return recent_shape
