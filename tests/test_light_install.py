"""The engine without the extras (issue 30): `pip install compaction-lab` brings tiktoken, click
and platformdirs, and compress, the importers, validate and the CLI's engine commands work with
none of Streamlit, plotly, Altair, pandas, sqlite-utils or litellm; a command that needs an extra
says which, never a traceback.

The missing packages are made unimportable in a fresh interpreter (a finder that refuses them),
which is what a light install is to the code. CI also installs `pip install .` into a fresh venv
and checks what it brought (.ci/run)."""

from __future__ import annotations

import json
import subprocess
import sys
import tomllib
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
EXTRAS_ONLY = (
    "streamlit",
    "plotly",
    "altair",
    "pandas",
    "sqlite_utils",
    "litellm",
    "dask",
    # The agent frameworks' extras and OpenTelemetry's (issue 32).
    "langchain",
    "langchain_core",
    "langgraph",
    "pydantic_ai",
    "agents",
    "openai",
    "opentelemetry",
)
SAMPLE = ROOT / "compaction" / "lab" / "samples" / "fix-failing-tests.openai.json"

REFUSE = f"""
import importlib.abc, sys
class Refuse(importlib.abc.MetaPathFinder):
    def find_spec(self, name, path=None, target=None):
        if name.partition('.')[0] in {EXTRAS_ONLY!r}:
            raise ModuleNotFoundError(f"No module named {{name!r}}", name=name)
        return None
sys.meta_path.insert(0, Refuse())
"""


def run_light(code: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-c", REFUSE + code],
        capture_output=True,
        text=True,
        cwd=ROOT,
        timeout=300,
        env={"PATH": "/usr/bin:/bin", "HOME": str(ROOT / ".no-home")},
    )


def test_the_core_dependencies_are_the_engines_only() -> None:
    project = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["project"]
    names = {
        d.split(">")[0].split("=")[0].split("[")[0].strip().lower() for d in project["dependencies"]
    }
    assert names == {"tiktoken", "click", "platformdirs"}
    extras = project["optional-dependencies"]
    assert any(d.startswith("litellm") for d in extras["llm"])
    assert {"streamlit", "plotly", "sqlite-utils"} <= {d.split(">")[0] for d in extras["app"]}


def test_compress_counts_exactly_and_validates_without_the_extras() -> None:
    completed = run_light(
        "import json\n"
        "from compaction import CompactionConfig, compress, load_conversation, validate\n"
        "from compaction.tokens import TiktokenCounter\n"
        f"conversation = load_conversation({str(SAMPLE)!r})\n"
        "result = compress(conversation, CompactionConfig(context_length=32_000))\n"
        "counter = TiktokenCounter('gpt-4o')\n"
        "assert result.tokens_after == counter.count_messages(result.messages)\n"
        "problems = [p for p in validate(result.messages, 'anthropic') if p.severity == 'error']\n"
        "print(json.dumps({'before': result.tokens_before, 'after': result.tokens_after,\n"
        "                  'errors': len(problems), 'summary': result.summary is not None}))\n"
    )
    assert completed.returncode == 0, completed.stderr
    report = json.loads(completed.stdout.strip().splitlines()[-1])
    assert report["after"] < report["before"] and report["errors"] == 0 and report["summary"]


def test_the_cli_compresses_and_names_the_extra_a_command_needs(tmp_path: Path) -> None:
    out = tmp_path / "out.json"
    completed = run_light(
        "from click.testing import CliRunner\n"
        "from compaction.cli import main\n"
        f"ok = CliRunner().invoke(main, ['compress', {str(SAMPLE)!r}, '-o', {str(out)!r},\n"
        "                                '--context-length', '32000'])\n"
        "assert ok.exit_code == 0, ok.output\n"
        "history = CliRunner().invoke(main, ['history', 'list'])\n"
        "print(history.exit_code)\n"
        "print(history.output)\n"
    )
    assert completed.returncode == 0, completed.stderr
    assert json.loads(out.read_text(encoding="utf-8"))
    lines = completed.stdout.strip().splitlines()
    assert lines[0] == "1"
    assert "needs sqlite_utils, which is not installed" in completed.stdout
    assert "pip install 'compaction-lab[app]'" in completed.stdout
    assert "Traceback" not in completed.stdout


def test_an_llm_summary_without_litellm_falls_back_and_says_which_extra() -> None:
    completed = run_light(
        "from compaction import CompactionConfig, compress, load_conversation, make_summarizer\n"
        f"conversation = load_conversation({str(SAMPLE)!r})\n"
        "summarizer = make_summarizer('llm', model='gpt-4o-mini')\n"
        "result = compress(conversation, CompactionConfig(context_length=32_000), summarizer)\n"
        "print(result.fallback_used)\n"
        "print(result.fallback_reason)\n"
    )
    assert completed.returncode == 0, completed.stderr
    assert completed.stdout.splitlines()[0] != "None"  # the compaction still ran
    assert "pip install 'compaction-lab[llm]'" in completed.stdout
