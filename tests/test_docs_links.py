"""The documents people read link only to files and headings that exist: a section moved or
renamed leaves no dead link behind (README.md and docs/ link into each other)."""

import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
DOCUMENTS = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]
LINK = re.compile(r"\]\(([^)\s]+)\)")


def anchors(path: Path) -> set[str]:
    """GitHub's heading anchors: lowercased, punctuation but - and _ removed, spaces as -;
    a repeated heading gets -1, -2..."""
    seen, found, fenced = {}, set(), False
    for line in path.read_text(encoding="utf-8").splitlines():
        if line.startswith("```"):
            fenced = not fenced
        if fenced or not line.startswith("#"):
            continue
        slug = re.sub(r"[^\w\- ]", "", line.lstrip("#").strip().lower()).replace(" ", "-")
        count = seen.get(slug, 0)
        seen[slug] = count + 1
        found.add(slug if count == 0 else f"{slug}-{count}")
    return found


def links(path: Path):
    fenced = False
    for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
        if line.startswith("```"):
            fenced = not fenced
        if not fenced:
            for target in LINK.findall(line):
                if not re.match(r"[a-z]+:", target):
                    yield number, target


def dead_links(document: Path) -> list[str]:
    dead = []
    for number, target in links(document):
        file_part, _, anchor = target.partition("#")
        linked = (document.parent / file_part).resolve() if file_part else document
        if not linked.exists():
            dead.append(f"{document.name}:{number}: {target} (no such file)")
        elif anchor and linked.suffix == ".md" and anchor not in anchors(linked):
            dead.append(f"{document.name}:{number}: {target} (no such heading)")
    return dead


@pytest.mark.parametrize("document", DOCUMENTS, ids=lambda p: p.name)
def test_every_relative_link_reaches_a_file_and_heading(document):
    dead = dead_links(document)
    assert not dead, "\n".join(dead)


def test_the_check_finds_a_dead_heading_and_a_dead_file(tmp_path):
    page = tmp_path / "page.md"
    page.write_text("# Title\n\n## Tried: once\n\n## Tried: once\n\n"
                    "[a](#tried-once-1) [b](#tried-twice) [c](gone.md#title) [d](page.md#title)\n")
    assert anchors(page) == {"title", "tried-once", "tried-once-1"}
    assert dead_links(page) == ["page.md:7: #tried-twice (no such heading)", "page.md:7: gone.md#title (no such file)"]
