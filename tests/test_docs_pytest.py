"""docs/pytest.md: its suite is the real file docs/examples/test_assignor.py, word for word; run as
pytest runs it, the suite passes with a correct assignor (``sticky``) and fails, naming the broken
invariant, with a deliberately broken one (tests/faulty_assignors.py)."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
PAGE = ROOT / "docs" / "pytest.md"
EXAMPLE = ROOT / "docs" / "examples" / "test_assignor.py"
BROKEN = "tests.faulty_assignors:drops_a_partition_with_three_members"


#: Put first in the broken suite's copy: the failure is what is checked, so Hypothesis skips shrinking
#: it (minutes on a busy machine).
NO_SHRINK = """from hypothesis import Phase, settings
settings.register_profile("no-shrink", phases=[Phase.explicit, Phase.reuse, Phase.generate])
settings.load_profile("no-shrink")
"""


def _run_pytest(path: Path, *args: str) -> subprocess.CompletedProcess:
    """The suite as a client author runs it (``pytest FILE``), at a fixed Hypothesis seed."""
    env = dict(os.environ, PYTHONPATH=os.pathsep.join([str(ROOT / "src"), str(ROOT)]))
    return subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "--hypothesis-seed=0", *args, str(path)],
        cwd=ROOT, env=env, capture_output=True, text=True, timeout=900,
    )


def _python_blocks(text: str) -> list[str]:
    return re.findall(r"```python\n(.*?)```", text, flags=re.S)


def test_the_page_shows_the_example_file_word_for_word():
    assert EXAMPLE.read_text(encoding="utf-8") in _python_blocks(PAGE.read_text(encoding="utf-8"))


def test_the_page_documents_the_api_it_uses():
    page = PAGE.read_text(encoding="utf-8")
    from stickyproof.strategies import HAZARDS

    for name in ("groups(", "grade_assignor(", "verdict_of(", "from_space(", "--junit", *HAZARDS):
        assert name in page, name


def test_the_example_suite_passes_with_a_correct_assignor():
    run = _run_pytest(EXAMPLE)
    assert run.returncode == 0, run.stdout[-3000:] + run.stderr[-2000:]
    assert "2 passed" in run.stdout


def test_the_example_suite_finds_a_broken_assignor(tmp_path):
    text = EXAMPLE.read_text(encoding="utf-8")
    assert 'ASSIGNOR = "sticky"\n' in text
    copy = tmp_path / "test_broken_assignor.py"
    copy.write_text(NO_SHRINK + text.replace('ASSIGNOR = "sticky"\n', f'ASSIGNOR = "{BROKEN}"\n'), encoding="utf-8")
    run = _run_pytest(copy, "-k", "test_keeps_every_promise")
    assert run.returncode == 1, run.stdout[-3000:]
    assert "FAILED" in run.stdout and "test_keeps_every_promise" in run.stdout
    assert "assert ('unassigned',) == ()" in run.stdout


@pytest.mark.parametrize("block", range(len(_python_blocks(PAGE.read_text(encoding="utf-8")))))
def test_every_python_block_of_the_page_compiles(block):
    compile(_python_blocks(PAGE.read_text(encoding="utf-8"))[block], f"docs/pytest.md block {block}", "exec")
