"""LoCoMo, read into conversations of chronological turns and the questions asked about them.

One turn is one window: `[date] speaker: text`, with an image caption (and the visual query the
caption answers) appended, as the official mem0 runner does. Sessions are found by looping over the
`session_N` keys, not the date keys: one sample has more dates than sessions.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass

CATEGORIES = {1: "multi-hop", 2: "temporal", 3: "open-domain", 4: "single-hop", 5: "adversarial"}
UNSCORED = frozenset({5})  # adversarial: the gold is "not answerable"; reported, never scored

_SESSION_KEY = re.compile(r"session_(\d+)")
_DIA_ID = re.compile(r"D:?(\d+):0*(\d+)")


class DatasetError(ValueError):
    """One line: the file, where in it, and what was expected."""


@dataclass(frozen=True)
class Turn:
    dia_id: str  # D<session>:<n>, what QA evidence points at
    session: int
    date: str
    speaker: str
    text: str  # the window's text, as ingested

    def window(self) -> list:
        # A person's own words: the user role, which no tool-output rule may take for a tool's.
        return [{"role": "user", "content": self.text}]


@dataclass(frozen=True)
class Question:
    key: str  # <sample_id>#<index in its qa list>, stable across runs
    sample_id: str
    question: str
    answer: str  # "" for adversarial questions
    category: int
    evidence: tuple  # resolved dia_ids
    unresolved: tuple  # evidence refs that name no turn of the conversation

    @property
    def category_name(self) -> str:
        return CATEGORIES.get(self.category, f"category-{self.category}")

    @property
    def scored(self) -> bool:
        return self.category not in UNSCORED


@dataclass(frozen=True)
class Conversation:
    sample_id: str
    speakers: tuple
    turns: tuple


@dataclass(frozen=True)
class Dataset:
    path: str
    conversations: tuple
    questions: tuple

    @property
    def turn_count(self) -> int:
        return sum(len(c.turns) for c in self.conversations)


def read_json(path: str, error=ValueError):
    """A JSON file's content, or `error` with one located line (the dataset and a saved report)."""
    try:
        with open(path, encoding="utf-8") as handle:
            return json.load(handle)
    except FileNotFoundError:
        raise error(f"{path}: no such file") from None
    except (OSError, UnicodeDecodeError) as exc:
        raise error(f"{path}: cannot read: {exc}") from None
    except json.JSONDecodeError as exc:
        raise error(f"{path}:{exc.lineno}:{exc.colno}: not JSON: {exc.msg}") from None


def load_dataset(path: str) -> Dataset:
    return parse_dataset(read_json(path, DatasetError), path)


def parse_dataset(raw, path: str = "<dataset>") -> Dataset:
    if not isinstance(raw, list) or not raw:
        raise DatasetError(f"{path}: expected a non-empty JSON list of LoCoMo samples")
    conversations, questions, seen = [], [], set()
    for index, sample in enumerate(raw):
        where = f"{path}: sample [{index}]"
        if not isinstance(sample, dict):
            raise DatasetError(f"{where}: expected an object with 'sample_id', 'conversation' and 'qa'")
        sample_id = sample.get("sample_id")
        if not isinstance(sample_id, str) or not sample_id:
            raise DatasetError(f"{where}: 'sample_id' must be a non-empty string")
        if sample_id in seen:
            raise DatasetError(f"{where}: duplicate sample_id {sample_id!r}")
        seen.add(sample_id)
        where = f"{path}: sample {sample_id!r}"
        conversation = _conversation(sample.get("conversation"), sample_id, where)
        conversations.append(conversation)
        questions.extend(_questions(sample.get("qa"), conversation, where))
    return Dataset(path=path, conversations=tuple(conversations), questions=tuple(questions))


def _conversation(conv, sample_id: str, where: str) -> Conversation:
    if not isinstance(conv, dict):
        raise DatasetError(f"{where}: 'conversation' must be an object of session_N lists")
    sessions = sorted((int(m.group(1)), key) for key in conv if (m := _SESSION_KEY.fullmatch(key)))
    if not sessions:
        raise DatasetError(f"{where}: 'conversation' has no session_N keys")
    turns = []
    for number, key in sessions:
        items = conv[key]
        if not isinstance(items, list):
            raise DatasetError(f"{where}: conversation.{key} must be a list of turns")
        date = conv.get(f"{key}_date_time")
        date = date.strip() if isinstance(date, str) else ""
        for position, item in enumerate(items):
            spot = f"{where}: conversation.{key}[{position}]"
            if not isinstance(item, dict):
                raise DatasetError(f"{spot}: expected an object with 'speaker', 'dia_id' and 'text'")
            for field in ("speaker", "dia_id", "text"):
                if not isinstance(item.get(field), str):
                    raise DatasetError(f"{spot}: '{field}' must be a string")
            turns.append(Turn(dia_id=_normal_id(item["dia_id"]) or item["dia_id"], session=number, date=date,
                              speaker=item["speaker"], text=turn_text(item, date)))
    speakers = tuple(conv[k] for k in ("speaker_a", "speaker_b") if isinstance(conv.get(k), str))
    return Conversation(sample_id=sample_id, speakers=speakers, turns=tuple(turns))


def turn_text(item: dict, date: str) -> str:
    text = f"{item['speaker']}: {item['text'].strip()}"
    caption = item.get("blip_caption")
    if isinstance(caption, str) and caption.strip():
        text += f" [shares an image: {caption.strip()}"
        query = item.get("query")
        if isinstance(query, str) and query.strip():
            text += f"; searched for: {query.strip()}"
        text += "]"
    return f"[{date}] {text}" if date else text


def _questions(qa, conversation: Conversation, where: str) -> list:
    if not isinstance(qa, list):
        raise DatasetError(f"{where}: 'qa' must be a list of questions")
    known = {t.dia_id for t in conversation.turns}
    out = []
    for index, item in enumerate(qa):
        spot = f"{where}: qa[{index}]"
        if not isinstance(item, dict) or not isinstance(item.get("question"), str):
            raise DatasetError(f"{spot}: expected an object with a string 'question'")
        category = item.get("category")
        if not isinstance(category, int) or isinstance(category, bool):
            raise DatasetError(f"{spot}: 'category' must be an integer 1-5")
        answer = item.get("answer", "")
        if category not in UNSCORED and answer in ("", None):
            raise DatasetError(f"{spot}: a scored question (category {category}) needs an 'answer'")
        refs = item.get("evidence", [])
        if not isinstance(refs, list):
            raise DatasetError(f"{spot}: 'evidence' must be a list of dia_ids")
        resolved, unresolved = [], []
        for ref in refs:
            for part in re.split(r"[;,\s]+", str(ref).strip()):
                if not part:
                    continue
                normal = _normal_id(part)
                (resolved if normal in known else unresolved).append(normal or part)
        out.append(Question(key=f"{conversation.sample_id}#{index}", sample_id=conversation.sample_id,
                            question=item["question"], answer=str(answer if answer is not None else ""),
                            category=category, evidence=tuple(dict.fromkeys(resolved)),
                            unresolved=tuple(unresolved)))
    return out


def _normal_id(ref: str) -> str | None:
    """'D30:05' and 'D:11:26' are typos of 'D30:5' and 'D11:26' in the published file."""
    m = _DIA_ID.fullmatch(ref.strip())
    return f"D{int(m.group(1))}:{int(m.group(2))}" if m else None
