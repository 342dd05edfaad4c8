"""prose_words: words outside code fences, compared with min / max."""

from gate.engine.conditions._bounds import within

KIND = "prose_words"


def compile(spec, ctx, path):
    def prose_words(subject) -> bool:
        return within(subject.prose_words, spec)

    prose_words.required_keywords = None
    return prose_words
