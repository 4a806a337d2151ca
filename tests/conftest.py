# -- loopback OpenAI-compatible server (LLM summariser tests) --------------------------------------
import collections.abc as _abc

import pytest as _pytest
from llm_server import LLMServer as _LLMServer


@_pytest.fixture
def llm_server() -> _abc.Iterator[_LLMServer]:
    """A fresh scriptable server on 127.0.0.1:<free port>, stopped after the test."""
    with _LLMServer() as server:
        yield server
