"""The repository is self-contained: what its documents and messages cite is in the repository.

A reader of the README, docs/, models/, a docstring, an error message or a regression file must be
able to open what it points to. Two checks: every relative Markdown link in the user's documents
resolves to a file (or a heading) the repository holds, and no tracked file names a document that
lives outside it (the notes the project was first written from; the Kafka reading is docs/rules.md,
the format docs/scenario-format.md).
"""

from __future__ import annotations

import re
import subprocess
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
OUTSIDE = re.compile(r"KAFKA_SEMANTICS|SCENARIO_FORMAT\.md|STYLE_EXAMPLES|KIP848\.md|ARCHITECTURE\.md|\.\./shared/|/work/shared")
LINK = re.compile(r"\]\(([^)\s]+)\)")


def _tracked() -> list[str]:
    out = subprocess.run(["git", "ls-files"], cwd=ROOT, capture_output=True, text=True, check=True).stdout.split()
    return [f for f in out if (ROOT / f).is_file()]


def _anchors(path: Path) -> set[str]:
    """GitHub's heading anchors of a Markdown file."""
    out = set()
    for line in path.read_text(encoding="utf-8").splitlines():
        if line.startswith("#"):
            text = line.lstrip("#").strip().lower()
            out.add(re.sub(r"[^\w\- ]", "", text).replace(" ", "-"))
    return out


def test_no_tracked_file_cites_a_document_outside_the_repository():
    here = Path(__file__).relative_to(ROOT).as_posix()
    found = []
    for f in _tracked():
        if f == here:
            continue
        try:
            text = (ROOT / f).read_text(encoding="utf-8")
        except UnicodeDecodeError:
            continue
        for n, line in enumerate(text.splitlines(), 1):
            if OUTSIDE.search(line):
                found.append(f"{f}:{n}: {line.strip()[:120]}")
    assert not found, "documents outside the repository cited:\n  " + "\n  ".join(found)


def test_every_relative_link_of_the_users_documents_resolves():
    docs = [f for f in _tracked() if f.endswith(".md") and (f == "README.md" or f.startswith(("docs/", "models/", "proofs/", "peers/", "tests/")))]
    dead = []
    for f in docs:
        path = ROOT / f
        for target in LINK.findall(path.read_text(encoding="utf-8")):
            if target.startswith(("http://", "https://", "mailto:")):
                continue
            file, _, anchor = target.partition("#")
            resolved = path if not file else (path.parent / file)
            if not resolved.exists():
                dead.append(f"{f}: {target} (no such file)")
            elif anchor and resolved.suffix == ".md" and anchor not in _anchors(resolved):
                dead.append(f"{f}: {target} (no such heading)")
    assert not dead, "dead links:\n  " + "\n  ".join(dead)
