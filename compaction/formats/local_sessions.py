"""Agent sessions stored on this machine: where each agent keeps them, newest first.

A person debugging "why did my agent forget X" has the answer in a file on disk; they should not
have to know where each agent writes it. Each root can be moved with an environment variable
(tests use temporary roots):

- Claude Code: `~/.claude/projects/*/<session>.jsonl` (subagent files are offered with their
  session, not listed), `COMPACTION_LAB_CLAUDE_DIR`;
- Codex: `~/.codex/sessions/**/rollout-*.jsonl`, `COMPACTION_LAB_CODEX_DIR`;
- Gemini CLI: `~/.gemini/tmp/*/chats/*.json` and `*.jsonl`, `COMPACTION_LAB_GEMINI_DIR`;
- hermes-agent: `~/.hermes/sessions/**/*.json`, `COMPACTION_LAB_HERMES_DIR`;
- Copilot CLI: `~/.copilot/session-state/*.jsonl` and `*/events.jsonl`,
  `COMPACTION_LAB_COPILOT_DIR`;
- Qwen Code: `~/.qwen/projects/*/chats/*.jsonl`, `COMPACTION_LAB_QWEN_DIR`;
- iFlow CLI: `~/.iflow/projects/*/session-*.jsonl`, `COMPACTION_LAB_IFLOW_DIR`;
- OpenCode: its data folder (`$XDG_DATA_HOME/opencode`, `~/.local/share/opencode`),
  `COMPACTION_LAB_OPENCODE_DIR`: the session files of `storage/session/*/` (up to 1.1) and the
  sessions of `opencode.db` (1.2 on), each listed as `<db>#<session id>` (subagent sessions are
  not listed);
- Cline, Roo Code, Kilo Code: the VS Code extension's task folders
  (`<VS Code user folder>/globalStorage/<extension>/tasks/*/api_conversation_history.json`),
  `COMPACTION_LAB_CLINE_DIR`, `COMPACTION_LAB_ROO_DIR`, `COMPACTION_LAB_KILO_DIR` (point the
  first at `~/.cline/data/tasks` for the Cline CLI).
Cursor's chat exports are saved wherever the user put them: there is no folder to list.

Listing only stats files. Messages, tokens and recorded compactions need an import, so they are
counted on demand (`describe`) and cached by path, size and mtime, in memory and in a small JSON
file in the user cache folder, so a second listing of an unchanged session costs nothing.
"""

from __future__ import annotations

import json
import os
import sys
import threading
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

from compaction.errors import CompactionError

MAX_FILES_PER_AGENT = 5_000  # a runaway folder must not make the listing hang


@dataclass(frozen=True)
class AgentRoot:
    agent: str
    variable: str
    default: str
    patterns: tuple[str, ...]


def _vscode_storage(extension: str) -> str:
    """Where VS Code keeps an extension's global storage on this platform."""
    if sys.platform == "darwin":
        user = "~/Library/Application Support/Code/User"
    elif sys.platform == "win32":
        user = os.path.join(os.environ.get("APPDATA", "~/AppData/Roaming"), "Code", "User")
    else:
        user = os.path.join(os.environ.get("XDG_CONFIG_HOME", "~/.config"), "Code", "User")
    return os.path.join(user, "globalStorage", extension, "tasks")


ROOTS: tuple[AgentRoot, ...] = (
    AgentRoot("claude-code", "COMPACTION_LAB_CLAUDE_DIR", "~/.claude/projects", ("*/*.jsonl",)),
    AgentRoot("codex", "COMPACTION_LAB_CODEX_DIR", "~/.codex/sessions", ("**/rollout-*.jsonl",)),
    AgentRoot(
        "gemini-cli",
        "COMPACTION_LAB_GEMINI_DIR",
        "~/.gemini/tmp",
        ("*/chats/*.json", "*/chats/*.jsonl"),
    ),
    AgentRoot("hermes", "COMPACTION_LAB_HERMES_DIR", "~/.hermes/sessions", ("**/*.json",)),
    AgentRoot(
        "copilot-cli",
        "COMPACTION_LAB_COPILOT_DIR",
        "~/.copilot/session-state",
        ("*.jsonl", "*/events.jsonl"),
    ),
    AgentRoot("qwen-code", "COMPACTION_LAB_QWEN_DIR", "~/.qwen/projects", ("*/chats/*.jsonl",)),
    AgentRoot("iflow", "COMPACTION_LAB_IFLOW_DIR", "~/.iflow/projects", ("*/session-*.jsonl",)),
    AgentRoot(
        "opencode",
        "COMPACTION_LAB_OPENCODE_DIR",
        os.path.join(os.environ.get("XDG_DATA_HOME", "~/.local/share"), "opencode"),
        ("storage/session/*/ses_*.json",),
    ),
    AgentRoot(
        "cline",
        "COMPACTION_LAB_CLINE_DIR",
        _vscode_storage("saoudrizwan.claude-dev"),
        ("*/api_conversation_history.json",),
    ),
    AgentRoot(
        "roo-code",
        "COMPACTION_LAB_ROO_DIR",
        _vscode_storage("rooveterinaryinc.roo-cline"),
        ("*/api_conversation_history.json",),
    ),
    AgentRoot(
        "kilo-code",
        "COMPACTION_LAB_KILO_DIR",
        _vscode_storage("kilocode.kilo-code"),
        ("*/api_conversation_history.json",),
    ),
)
AGENTS = tuple(root.agent for root in ROOTS)
TASK_FOLDER_AGENTS = ("cline", "roo-code", "kilo-code")


@dataclass(frozen=True)
class SessionFile:
    """One session file found on disk (stat only: nothing is read to list it)."""

    path: Path
    agent: str
    project: str
    modified: float
    size: int


@dataclass
class SessionFacts:
    """What an import of the session says: counted lazily, cached by path + size + mtime."""

    messages: int | None = None
    tokens: int | None = None
    compactions: int | None = None
    title: str | None = None
    error: str | None = None


def root_of(root: AgentRoot) -> Path:
    return Path(os.path.expanduser(os.environ.get(root.variable) or root.default))


#: Folders beyond the agents' own whose session files a `?session=` link may open, separated
#: like PATH (`os.pathsep`): the person names them on purpose; a link alone never can.
SESSION_DIRS_VARIABLE = "COMPACTION_LAB_SESSION_DIRS"


def session_folders() -> list[Path]:
    """The folders a link may open a session file from: every agent's root and the folders
    named in $COMPACTION_LAB_SESSION_DIRS."""
    folders = [root_of(root) for root in ROOTS]
    configured = os.environ.get(SESSION_DIRS_VARIABLE, "")
    folders += [Path(os.path.expanduser(part)) for part in configured.split(os.pathsep) if part]
    return folders


def file_of(path: Path) -> Path:
    """The file a session path names: an OpenCode database session is `<db>#<session id>`."""
    text = str(path)
    if "#" in text and not path.exists():
        return Path(text.split("#", 1)[0])
    return path


def is_within(path: Path, folders: list[Path]) -> bool:
    """Whether `path` (its real location, after symlinks and `..`) lies in one of `folders`
    (a folder may also be a single file, which then admits only itself)."""
    real = file_of(path).expanduser().resolve()
    return any(real.is_relative_to(folder.expanduser().resolve()) for folder in folders)


def opencode_data() -> Path:
    """OpenCode's data folder on this machine (storage/ and opencode.db are in it)."""
    return root_of(next(root for root in ROOTS if root.agent == "opencode"))


HEAD_BYTES = 256 * 1024


def _cwd_from_head(path: Path) -> str | None:
    """The working directory a JSONL session records near its start (Claude Code, Codex)."""
    try:
        with path.open("rb") as handle:
            head = handle.read(HEAD_BYTES)
    except OSError:
        return None
    for line in head.splitlines()[:50]:
        try:
            record = json.loads(line)
        except ValueError:
            continue
        if not isinstance(record, dict):
            continue
        payload = record.get("payload")
        for holder in (record, payload if isinstance(payload, dict) else {}):
            cwd = holder.get("cwd")
            if isinstance(cwd, str) and cwd:
                return cwd
    return None


def _project(root: AgentRoot, base: Path, path: Path) -> str:
    """The project a session belongs to: its recorded working directory, else the layout."""
    relative = path.relative_to(base)
    if root.agent in ("claude-code", "codex", "qwen-code", "iflow"):
        cwd = _cwd_from_head(path)
        if cwd is not None:
            return cwd
    if root.agent == "opencode":
        return _opencode_directory(path) or (relative.parts[2] if len(relative.parts) > 2 else "")
    if root.agent in TASK_FOLDER_AGENTS:
        return ""  # a task records its folder only in its messages' environment details
    if root.agent == "claude-code":
        # Claude Code names the folder after the working directory, `/` replaced by `-`.
        return relative.parts[0].replace("-", "/") if relative.parts else ""
    if root.agent == "gemini-cli":
        return relative.parts[0] if relative.parts else ""  # the project hash
    if root.agent == "copilot-cli" and path.name == "events.jsonl":
        return relative.parts[0]
    return str(relative.parent) if str(relative.parent) != "." else ""


def _opencode_directory(path: Path) -> str | None:
    """The project folder an OpenCode session file (a small JSON object) names."""
    try:
        info = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    directory = info.get("directory") if isinstance(info, dict) else None
    return directory if isinstance(directory, str) else None


def _database_sessions(base: Path) -> list[SessionFile]:
    """The sessions of OpenCode's `opencode.db`, as `<db>#<session id>` addresses."""
    from compaction.formats.opencode.storage import DB_NAME, db_sessions, is_sqlite

    db = base / DB_NAME
    if not db.is_file() or not is_sqlite(db):
        return []
    try:
        sessions = db_sessions(db)
    except CompactionError:
        return []  # a database OpenCode is migrating, or not OpenCode's: nothing to list
    return [
        SessionFile(
            path=Path(session.address),
            agent="opencode",
            project=session.directory or "",
            modified=session.updated,
            size=0,
        )
        for session in sessions[:MAX_FILES_PER_AGENT]
    ]


def _is_session(root: AgentRoot, path: Path) -> bool:
    if root.agent == "claude-code":
        # Subagent transcripts are offered with their session, not listed on their own.
        return not path.name.startswith("agent-") and "subagents" not in path.parts
    return True


def list_sessions(agents: tuple[str, ...] | None = None) -> list[SessionFile]:
    """Every session file under the agents' roots, newest first."""
    found: dict[Path, SessionFile] = {}
    for root in ROOTS:
        if agents and root.agent not in agents:
            continue
        base = root_of(root)
        if not base.is_dir():
            continue
        count = 0
        for pattern in root.patterns:
            for path in base.glob(pattern):
                if count >= MAX_FILES_PER_AGENT:
                    break
                if path in found or not _is_session(root, path):
                    continue
                try:
                    info = path.stat()
                except OSError:
                    continue  # removed while listing
                if not path.is_file():
                    continue
                count += 1
                found[path] = SessionFile(
                    path=path,
                    agent=root.agent,
                    project=_project(root, base, path),
                    modified=info.st_mtime,
                    size=info.st_size,
                )
        if root.agent == "opencode":
            for session in _database_sessions(base):
                found[session.path] = session
    return sorted(found.values(), key=lambda s: (-s.modified, str(s.path)))


class FactsCache:
    """SessionFacts by (path, size, mtime), in memory and optionally in a JSON file."""

    def __init__(self, file: Path | None = None) -> None:
        self.file = file
        self._lock = threading.Lock()
        self._entries: dict[str, dict[str, Any]] = {}
        if file is not None and file.is_file():
            try:
                loaded = json.loads(file.read_text(encoding="utf-8"))
                if isinstance(loaded, dict):
                    self._entries = {k: v for k, v in loaded.items() if isinstance(v, dict)}
            except (OSError, ValueError):
                self._entries = {}  # a damaged cache is rebuilt, never an error

    @staticmethod
    def key(session: SessionFile) -> str:
        return f"{session.path}|{session.size}|{session.modified}"

    def get(self, session: SessionFile) -> SessionFacts | None:
        with self._lock:
            entry = self._entries.get(self.key(session))
        return SessionFacts(**entry) if entry is not None else None

    def put(self, session: SessionFile, facts: SessionFacts) -> None:
        with self._lock:
            # Older versions of the same path are stale: keep one entry per path.
            prefix = f"{session.path}|"
            for key in [k for k in self._entries if k.startswith(prefix)]:
                del self._entries[key]
            self._entries[self.key(session)] = asdict(facts)

    def save(self) -> None:
        if self.file is None:
            return
        with self._lock:
            text = json.dumps(self._entries)
        try:
            self.file.parent.mkdir(parents=True, exist_ok=True)
            temporary = self.file.with_suffix(".tmp")
            temporary.write_text(text, encoding="utf-8")
            temporary.replace(self.file)
        except OSError:
            pass  # a read-only cache folder only costs a recount next time


def default_cache() -> FactsCache:
    import platformdirs

    return FactsCache(Path(platformdirs.user_cache_dir("compaction-lab")) / "sessions.json")


def describe(session: SessionFile, cache: FactsCache | None = None) -> SessionFacts:
    """Messages, tokens and recorded compactions of a session (its first conversation)."""
    if cache is not None:
        cached = cache.get(session)
        if cached is not None:
            return cached
    from compaction.formats import load_conversations
    from compaction.tokens import make_counter

    try:
        conversation = load_conversations(session.path)[0]
        tokens = make_counter().count_messages(conversation.messages)
        facts = SessionFacts(
            messages=len(conversation.messages),
            tokens=tokens,
            compactions=len(conversation.compactions),
            title=conversation.title,
        )
    except (CompactionError, OSError, ValueError, TypeError, KeyError, RecursionError) as exc:
        facts = SessionFacts(error=str(exc))
    if cache is not None:
        cache.put(session, facts)
    return facts


def modified_since(path: Path, mtime: float, size: int) -> bool:
    """Whether a followed session was written to since it was loaded."""
    try:
        info = path.stat()
    except OSError:
        return False
    return info.st_mtime != mtime or info.st_size != size
