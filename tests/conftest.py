# -- loopback OpenAI-compatible server (LLM summariser tests) --------------------------------------
import collections.abc as _abc
import pathlib as _pathlib

import pytest as _pytest
from llm_server import LLMServer as _LLMServer


@_pytest.fixture
def llm_server() -> _abc.Iterator[_LLMServer]:
    """A fresh scriptable server on 127.0.0.1:<free port>, stopped after the test."""
    with _LLMServer() as server:
        yield server


# -- run history: never touch the user's real history database ------------------------------------
@_pytest.fixture(autouse=True)
def _history_db(tmp_path: "_pathlib.Path", monkeypatch: _pytest.MonkeyPatch) -> "_pathlib.Path":
    """Point COMPACTION_LAB_DB at a fresh file under tmp_path for every test."""
    path = tmp_path / "history" / "history.db"
    monkeypatch.setenv("COMPACTION_LAB_DB", str(path))
    return path
