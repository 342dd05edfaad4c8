"""`gate audit --format html`: one valid, self-contained page, checked as text and in real headless Chromium.

The browser test skips, saying why, where Chromium is not installed (.ci/run installs it).
"""

from __future__ import annotations

import shutil
import struct
import subprocess
from html.parser import HTMLParser

import pytest

from auditkit import FACTS, HEARTBEATS, memory, rules, run, write_jsonl

VOID = {"area", "base", "br", "col", "embed", "hr", "img", "input", "link", "meta", "source", "track", "wbr"}
HOSTILE = "<script>alert(1)</script></table><img src=http://example.invalid/x.png> & \"quoted\""


class _Structure(HTMLParser):
    """Balanced tags, unique ids, and everything that could reach outside the page."""

    def __init__(self):
        super().__init__()
        self.stack, self.ids, self.errors, self.tags, self.external = [], [], [], [], []
        self.doctype = False

    def handle_decl(self, decl):
        self.doctype = self.doctype or decl.lower() == "doctype html"

    def handle_starttag(self, tag, attrs):
        self.tags.append(tag)
        attrs = dict(attrs)
        if "id" in attrs:
            self.ids.append(attrs["id"])
        for name in ("src", "href", "srcset", "action", "data"):
            if attrs.get(name):
                self.external.append(f"{tag} {name}={attrs[name]}")
        if tag not in VOID:
            self.stack.append(tag)

    def handle_startendtag(self, tag, attrs):
        self.handle_starttag(tag, attrs)
        if tag not in VOID:
            self.stack.pop()

    def handle_endtag(self, tag):
        if not self.stack or self.stack[-1] != tag:
            self.errors.append(f"</{tag}> closes <{self.stack[-1] if self.stack else None}>")
            return
        self.stack.pop()


def _store():
    out = [memory(HEARTBEATS[i % 5], policy="p-old", day=1 + i % 4, hour=8 + i % 10) for i in range(24)]
    out += [memory(f, policy="p-new", mtype="decision", day=5 + i % 3) for i, f in enumerate(FACTS)]
    out += [memory(HOSTILE + " one", policy="p-new", day=6), memory(HOSTILE + " two", policy="p-new", day=7)]
    return out


@pytest.fixture
def page(tmp_path):
    export = write_jsonl(tmp_path / "export.jsonl", _store())
    out = tmp_path / "audit.html"
    code, stdout, err = run(export, "--rules", rules(tmp_path, dup=0.5, noise=0.9), "--check",
                            "--format", "html", "--out", str(out), "--jobs", "1")
    assert code == 1, err  # near-duplicates are above the 50% ceiling
    assert f"wrote {out}" in stdout and "check: FAILED" in stdout  # the summary still prints
    return out


def test_the_page_is_valid_and_self_contained(page):
    html = page.read_text(encoding="utf-8")
    parser = _Structure()
    parser.feed(html)
    parser.close()
    assert parser.doctype
    assert parser.errors == [] and parser.stack == []
    assert len(parser.ids) == len(set(parser.ids))
    assert parser.external == []  # no src, no href: nothing is fetched
    assert "script" not in parser.tags and "link" not in parser.tags and "iframe" not in parser.tags
    lowered = html.lower()
    assert "@import" not in lowered and "url(" not in lowered
    assert '<meta charset="utf-8">' in html
    # the memory text is there, escaped
    assert "&lt;script&gt;alert(1)&lt;/script&gt;&lt;/table&gt;" in html
    # the pieces the page exists for
    assert parser.tags.count("svg") == 1 and parser.tags.count("rect") >= 7
    assert {"per-day-chart", "per-policy-table", "largest-clusters", "check"} <= set(parser.ids)
    assert "Check failed" in html and "near-duplicate share" in html


def _chromium() -> str | None:
    return shutil.which("chromium") or shutil.which("chromium-browser") or shutil.which("google-chrome")


def _browser(*args, timeout=90) -> subprocess.CompletedProcess:
    return subprocess.run([_chromium(), "--headless", "--no-sandbox", "--disable-gpu", "--no-first-run",
                           "--disable-extensions", "--host-resolver-rules=MAP * ~NOTFOUND", *args],
                          capture_output=True, text=True, timeout=timeout)


@pytest.mark.skipif(_chromium() is None, reason="Chromium is not installed (apt-get install chromium; .ci/run does)")
def test_the_page_renders_in_headless_chromium_with_its_chart_and_tables(page, tmp_path):
    dom = _browser("--dump-dom", page.as_uri())
    assert dom.returncode == 0, dom.stderr[-2000:]
    rendered = _Structure()
    rendered.feed(dom.stdout)
    assert {"per-day-chart", "per-policy-table", "largest-clusters", "per-type-table"} <= set(rendered.ids)
    assert rendered.tags.count("rect") >= 7  # the browser parsed the chart's bars
    assert "script" not in rendered.tags  # the hostile memory text stayed text
    assert dom.stdout.count("<tr>") >= 2 + 1  # two policies and a header in the policy table at least
    assert "p-old" in dom.stdout and "p-new" in dom.stdout

    shot = tmp_path / "audit.png"
    result = _browser(f"--screenshot={shot}", "--window-size=1280,1800", "--hide-scrollbars", page.as_uri())
    assert result.returncode == 0, result.stderr[-2000:]
    data = shot.read_bytes()
    assert data[:8] == b"\x89PNG\r\n\x1a\n"
    width, height = struct.unpack(">II", data[16:24])
    assert (width, height) == (1280, 1800)
    assert len(data) > 40_000  # a blank page compresses to a few kilobytes
