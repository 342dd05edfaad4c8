"""Shared pieces for the bench tests: a tiny LoCoMo-shaped dataset, and loopback stand-ins for a
mem0 OSS server and an OpenAI-compatible model server. Real HTTP on 127.0.0.1; nothing mocked.

The dataset's wording is our own: two invented conversations, shaped like locomo10.json (session_N
lists, a date key with no session, an image turn, evidence refs with the published typos).
"""

from __future__ import annotations

import contextlib
import json
import re
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from urllib.parse import parse_qs, urlsplit

# Distinctive, so a grep of every output proves they never leak.
MEM0_KEY = "m0-BENCHkeyZq81secretVALUE"
LLM_KEY = "sk-benchLLMkey42secretVALUEzz"


def tiny_locomo() -> list:
    return [
        {
            "sample_id": "conv-a",
            "conversation": {
                "speaker_a": "Ilse", "speaker_b": "Tomas",
                "session_1_date_time": "9:15 am on 3 March, 2024",
                "session_1": [
                    {"speaker": "Ilse", "dia_id": "D1:1", "text": "Morning Tomas! I finally adopted a greyhound from the shelter last weekend."},
                    {"speaker": "Tomas", "dia_id": "D1:2", "text": "No way, congrats! What did you name him?"},
                    {"speaker": "Ilse", "dia_id": "D1:3", "text": "Named him Biscuit. The dog sleeps nineteen hours a day, honestly."},
                    {"speaker": "Tomas", "dia_id": "D1:4", "text": "Ha. I've been restoring a sailboat with my uncle in Porto.",
                     "img_url": ["https://example.invalid/boat.jpg"], "blip_caption": "a photo of a small wooden boat on a trailer",
                     "query": "wooden sailboat restoration"},
                    {"speaker": "Ilse", "dia_id": "D1:5", "text": "That sounds lovely. Is it seaworthy yet?"},
                    {"speaker": "Tomas", "dia_id": "D1:6", "text": "Not yet, the hull needs new varnish first."},
                ],
                "session_2_date_time": "6:40 pm on 21 April, 2024",
                "session_2": [
                    {"speaker": "Tomas", "dia_id": "D2:1", "text": "We launched the sailboat on Saturday, it floats!"},
                    {"speaker": "Ilse", "dia_id": "D2:2", "text": "Amazing! Biscuit and I started agility classes on Tuesdays."},
                    {"speaker": "Tomas", "dia_id": "D2:3", "text": "Does he like it?"},
                    {"speaker": "Ilse", "dia_id": "D2:4", "text": "He loves the tunnel, hates the seesaw."},
                ],
                "session_3_date_time": "10:00 am on 2 May, 2024",  # a date with no session, as in the real file
            },
            "qa": [
                {"question": "What breed of dog did Ilse adopt?", "answer": "greyhound", "evidence": ["D1:1"], "category": 4},
                {"question": "What did Ilse name her dog?", "answer": "Biscuit", "evidence": ["D1:03"], "category": 4},
                {"question": "Where is Tomas restoring the sailboat?", "answer": "Porto", "evidence": ["D1:4"], "category": 3},
                {"question": "When did Tomas launch the sailboat?", "answer": "the Saturday before 21 April 2024",
                 "evidence": ["D2:1"], "category": 2},
                {"question": "Which obstacle does Biscuit hate in agility class?", "answer": "seesaw",
                 "evidence": ["D2:2; D2:4"], "category": 1},
                {"question": "What did Ilse say about her cat's diet?", "evidence": ["D1:3"], "category": 5,
                 "adversarial_answer": "it eats only fish"},
            ],
        },
        {
            "sample_id": "conv-b",
            "conversation": {
                "speaker_a": "Wen", "speaker_b": "Adaeze",
                "session_1_date_time": "2:05 pm on 11 June, 2023",
                "session_1": [
                    {"speaker": "Wen", "dia_id": "D1:1", "text": "I signed up for a pottery workshop in Kyoto next month."},
                    {"speaker": "Adaeze", "dia_id": "D1:2", "text": "Oh nice. I just got promoted to head nurse at the clinic."},
                    {"speaker": "Wen", "dia_id": "D1:3", "text": "That is huge, well deserved!"},
                    {"speaker": "Adaeze", "dia_id": "D1:4", "text": "Thanks. My sister is visiting from Lagos in August too."},
                ],
            },
            "qa": [
                {"question": "Where is Wen's pottery workshop?", "answer": "Kyoto", "evidence": ["D1:1"], "category": 4},
                {"question": "What job was Adaeze promoted to?", "answer": "head nurse", "evidence": ["D1:2"], "category": 1},
                {"question": "Where does Adaeze's sister live?", "answer": "Lagos", "evidence": ["D1:4", "D9:9"], "category": 3},
                {"question": "What did Wen bake for the clinic?", "evidence": ["D1:2"], "category": 5,
                 "adversarial_answer": "banana bread"},
            ],
        },
    ]


def write_dataset(tmp_path, data=None) -> str:
    path = tmp_path / "tiny_locomo.json"
    path.write_text(json.dumps(data if data is not None else tiny_locomo()))
    return str(path)


@contextlib.contextmanager
def serve(handler_class, state):
    """A ThreadingHTTPServer on loopback with `state` on the server; yields its base URL."""
    server = ThreadingHTTPServer(("127.0.0.1", 0), handler_class)
    server.daemon_threads = True
    server.state = state
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}"
    finally:
        server.shutdown()
        server.server_close()


class _Json(BaseHTTPRequestHandler):
    def log_message(self, *args):  # quiet test output
        pass

    def _body(self):
        length = int(self.headers.get("Content-Length") or 0)
        raw = self.rfile.read(length) if length else b""
        try:
            return json.loads(raw) if raw else None
        except ValueError:
            return raw.decode("utf-8", "replace")

    def _send(self, status: int, payload) -> None:
        data = json.dumps(payload).encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)


class Mem0State:
    """What the stand-in mem0 OSS server holds and saw. Failure switches match user ids by substring."""

    def __init__(self, *, key=None, fail_add="", fail_search=""):
        self.key = key
        self.fail_add = fail_add
        self.fail_search = fail_search
        self.memories = {}  # user_id -> [memory]
        self.requests = []  # (method, path, query, body, key_ok)
        self.lock = threading.Lock()


class Mem0OssHandler(_Json):
    """POST /memories, POST /search, DELETE /memories, as a self-hosted mem0 OSS server answers."""

    def _handle(self, method):
        state = self.server.state
        url = urlsplit(self.path)
        query = {k: v[-1] for k, v in parse_qs(url.query).items()}
        body = self._body()
        key_ok = state.key is None or self.headers.get("X-API-Key") == state.key
        with state.lock:
            state.requests.append((method, url.path, query, body, key_ok))
        if not key_ok:
            return self._send(401, {"detail": "bad api key"})
        if method == "DELETE" and url.path == "/memories":
            with state.lock:
                state.memories.pop(query.get("user_id"), None)
            return self._send(200, {"message": "deleted"})
        if method == "POST" and url.path == "/memories":
            user = body["user_id"]
            if state.fail_add and state.fail_add in user:
                return self._send(500, {"detail": f"vector store unavailable (key {MEM0_KEY})"})
            text = body["messages"][0]["content"]
            with state.lock:
                items = state.memories.setdefault(user, [])
                items.append({"id": f"m{len(items)}", "memory": text, "metadata": body.get("metadata") or {}})
            return self._send(200, {"results": [{"id": items[-1]["id"], "event": "ADD", "memory": text}]})
        if method == "POST" and url.path == "/search":
            user = body["filters"]["user_id"]
            if state.fail_search and state.fail_search in user:
                return self._send(503, {"detail": "search backend overloaded"})
            words = set(re.findall(r"\w+", body["query"].lower()))
            with state.lock:
                items = list(state.memories.get(user, []))
            scored = [(len(words & set(re.findall(r"\w+", m["memory"].lower()))), i, m) for i, m in enumerate(items)]
            scored = [s for s in scored if s[0] > 0]
            scored.sort(key=lambda s: (-s[0], s[1]))
            return self._send(200, {"results": [dict(m, score=float(n)) for n, _, m in scored[: body["limit"]]]})
        return self._send(404, {"detail": "not found"})

    def do_POST(self):
        self._handle("POST")

    def do_DELETE(self):
        self._handle("DELETE")

    def do_GET(self):
        self._handle("GET")


class LlmState:
    """The stand-in model server: answers with the first memory, judges by word overlap."""

    def __init__(self, *, key=LLM_KEY, garbage_judge=False):
        self.key = key
        self.garbage_judge = garbage_judge
        self.requests = []  # (path, model, key_ok)
        self.lock = threading.Lock()


class LlmHandler(_Json):
    def do_POST(self):
        state = self.server.state
        body = self._body()
        key_ok = self.headers.get("Authorization") == f"Bearer {state.key}"
        with state.lock:
            state.requests.append((self.path, body.get("model") if isinstance(body, dict) else None, key_ok))
        if not key_ok:
            return self._send(401, {"error": {"message": "invalid key"}})
        if self.path != "/v1/chat/completions":
            return self._send(404, {"error": {"message": "no such route"}})
        system, user = body["messages"][0]["content"], body["messages"][1]["content"]
        if "grade an answer" in system:
            if state.garbage_judge:
                text = "It depends."
            else:
                item = json.loads(user)
                gold = set(re.findall(r"\w+", str(item["gold_answer"]).lower()))
                text = "CORRECT" if gold and gold <= set(re.findall(r"\w+", item["answer"].lower())) else "WRONG"
        else:
            first = re.search(r"^1\. (.*)$", user, re.M)
            text = first.group(1) if first else "not mentioned"
        return self._send(200, {"choices": [{"message": {"role": "assistant", "content": text}}],
                                "usage": {"prompt_tokens": len(user.split()), "completion_tokens": len(text.split())}})
