"""The code on docs/library.md and in the README runs as written (a stale example is worse than
none): each ```python block is executed, with SESSION set to a shipped sample session."""

from __future__ import annotations

import contextlib
import io
import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
SAMPLE = ROOT / "compaction" / "lab" / "samples" / "fix-failing-tests.openai.json"


def python_blocks(path: Path) -> list[str]:
    return re.findall(r"```python\n(.*?)```", path.read_text(encoding="utf-8"), flags=re.S)


@pytest.mark.parametrize("doc", ["docs/library.md", "README.md"])
def test_every_python_block_runs(doc: str) -> None:
    blocks = python_blocks(ROOT / doc)
    assert blocks, f"{doc} has no python example"
    for block in blocks:
        printed = io.StringIO()
        with contextlib.redirect_stdout(printed):
            exec(compile(block, doc, "exec"), {"SESSION": str(SAMPLE), "__name__": "__doc__"})
        assert printed.getvalue().strip(), f"a block of {doc} printed nothing:\n{block}"
