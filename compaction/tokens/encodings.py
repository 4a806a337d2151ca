"""tiktoken's o200k_base and cl100k_base encodings, from files this package ships.

tiktoken downloads an encoding's rank file on first use, which cannot work offline, and the
engine must not need litellm (its copies of the files) or the network. So the two rank files are
package data (`data/`, tiktoken's own files, MIT, checked against tiktoken's published SHA-256 on
load), and each Encoding is built from them here, with the split pattern and special tokens
tiktoken's constructors give it (tiktoken_ext/openai_public.py). Nothing is written to
`os.environ` and no tiktoken function is replaced: the caller's tiktoken behaves as before.
"""

from __future__ import annotations

import binascii
import hashlib
import threading
from importlib import resources
from typing import Any

from compaction.errors import TokenizerError

ENDOFTEXT = "<|endoftext|>"
FIM_PREFIX = "<|fim_prefix|>"
FIM_MIDDLE = "<|fim_middle|>"
FIM_SUFFIX = "<|fim_suffix|>"
ENDOFPROMPT = "<|endofprompt|>"

_CL100K_PATTERN = (
    r"""'(?i:[sdmt]|ll|ve|re)|[^\r\n\p{L}\p{N}]?+\p{L}++|\p{N}{1,3}+| ?[^\s\p{L}\p{N}]++[\r\n]*+"""
    r"""|\s++$|\s*[\r\n]|\s+(?!\S)|\s"""
)
_O200K_PATTERN = "|".join(
    [
        r"""[^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]*[\p{Ll}\p{Lm}\p{Lo}\p{M}]+"""
        r"""(?i:'s|'t|'re|'ve|'m|'ll|'d)?""",
        r"""[^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]+[\p{Ll}\p{Lm}\p{Lo}\p{M}]*"""
        r"""(?i:'s|'t|'re|'ve|'m|'ll|'d)?""",
        r"""\p{N}{1,3}""",
        r""" ?[^\s\p{L}\p{N}]+[\r\n/]*""",
        r"""\s*[\r\n]+""",
        r"""\s+(?!\S)""",
        r"""\s+""",
    ]
)


class _Spec:
    def __init__(self, sha256: str, pattern: str, special: dict[str, int]) -> None:
        self.sha256 = sha256
        self.pattern = pattern
        self.special = special


#: name -> the rank file's SHA-256 (as tiktoken checks it), the split pattern, special tokens.
SPECS: dict[str, _Spec] = {
    "o200k_base": _Spec(
        "446a9538cb6c348e3516120d7c08b09f57c36495e2acfffe59a5bf8b0cfb1a2d",
        _O200K_PATTERN,
        {ENDOFTEXT: 199999, ENDOFPROMPT: 200018},
    ),
    "cl100k_base": _Spec(
        "223921b76ee99bde995b7ff738513eef100fb51d18c93597a113bcffe865b2a7",
        _CL100K_PATTERN,
        {
            ENDOFTEXT: 100257,
            FIM_PREFIX: 100258,
            FIM_MIDDLE: 100259,
            FIM_SUFFIX: 100260,
            ENDOFPROMPT: 100276,
        },
    ),
}

# An Encoding is immutable and costs ~0.2 s and tens of MB to build: one per name per process,
# two at most (the names above), so this never grows with the conversations compacted.
_LOADED: dict[str, Any] = {}
_LOCK = threading.Lock()


def load_encoding(name: str) -> Any:
    """The tiktoken Encoding `name` (o200k_base or cl100k_base), built from the shipped files."""
    with _LOCK:
        encoding = _LOADED.get(name)
        if encoding is None:
            encoding = _LOADED[name] = _build(name)
        return encoding


def _build(name: str) -> Any:
    spec = SPECS.get(name)
    if spec is None:
        raise TokenizerError(f"no encoding {name!r} is shipped; choose one of {', '.join(SPECS)}")
    try:
        import tiktoken
    except ImportError as exc:  # a declared dependency: only a broken install lacks it
        raise TokenizerError(
            "tiktoken is not installed; reinstall compaction-lab or use the rough counter "
            "(--counter rough)"
        ) from exc
    data = resources.files("compaction.tokens").joinpath("data", f"{name}.tiktoken").read_bytes()
    if hashlib.sha256(data).hexdigest() != spec.sha256:
        raise TokenizerError(
            f"the shipped {name} rank file does not match tiktoken's published hash; reinstall "
            "compaction-lab"
        )
    return tiktoken.Encoding(
        name=name,
        pat_str=spec.pattern,
        mergeable_ranks=read_ranks(data),
        special_tokens=spec.special,
    )


def read_ranks(data: bytes) -> dict[bytes, int]:
    """A rank file ("base64-token rank" lines) as tiktoken's mergeable ranks, parsed in a few
    C-level passes (tiktoken's own parser decodes 200,000 lines one by one in Python, ~0.2 s)."""
    fields = data.split()
    if len(fields) % 2:
        raise TokenizerError("a rank file is not token-rank pairs")
    try:
        return dict(
            zip(map(binascii.a2b_base64, fields[0::2]), map(int, fields[1::2]), strict=True)
        )
    except (ValueError, binascii.Error) as exc:
        raise TokenizerError(f"a rank file could not be read ({exc})") from exc
