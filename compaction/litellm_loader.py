"""The one place litellm is imported: lazily (the import costs 2–4 s), offline, and with a clear
error when the `[llm]` extra is not installed.

litellm reads LITELLM_LOCAL_MODEL_COST_MAP when it is imported; without it, the import fetches
the model map from the network. The variable is set only if the user has not chosen a value,
and only on the first call that needs litellm (never at import of compaction: the engine runs
inside other people's processes)."""

from __future__ import annotations

import os
from typing import Any

from compaction.errors import ConfigError

INSTALL_HINT = "pip install 'compaction-lab[llm]'"


def load_litellm() -> Any:
    """The litellm module, imported offline; ConfigError when it is not installed."""
    os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")
    try:
        import litellm
    except ImportError as exc:
        raise ConfigError(
            f"this needs litellm, which is not installed ({INSTALL_HINT}): {exc}"
        ) from exc
    litellm.suppress_debug_info = True
    return litellm
