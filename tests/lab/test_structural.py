"""The structural measure (lab/structural.py): facts defined by the transcript's structure, mined
without the summariser's code, and reported beside probe recall."""

from __future__ import annotations

import ast
import json
from pathlib import Path
from typing import Any

import pytest

from compaction.lab import structural
from compaction.lab.evaluate import COMPACTION, MATCHED, aggregate, evaluate
from compaction.lab.structural import latest_request, mine, structural_recall
from compaction.messages import INJECTED_KEY

CORPUS = Path(__file__).resolve().parents[2].parent / "shared" / "corpus"


def call(call_id: str, name: str, **arguments: Any) -> dict[str, Any]:
    return {
        "id": call_id,
        "type": "function",
        "function": {"name": name, "arguments": json.dumps(arguments)},
    }


SESSION: list[dict[str, Any]] = [
    {"role": "system", "content": "You are a coding agent."},
    {"role": "user", "content": "Fix the importer. Never touch the migrations folder."},
    {
        "role": "assistant",
        "content": "Reading the docs at https://example.com/docs/importer first.",
        "tool_calls": [
            call("c1", "Read", file_path="/repo/app/importer.py"),
            call("c2", "exec_command", cmd="sed -i 's/a/b/' src/a.py && /usr/bin/time pytest -q"),
        ],
    },
    {"role": "tool", "tool_call_id": "c1", "content": "def load(): ..."},
    {
        "role": "tool",
        "tool_call_id": "c2",
        "content": "Process exited with code 1\nValueError: bad row 7\n1 failed, 3 passed",
    },
    {"role": "user", "content": "<command-name>/compact</command-name>"},
    {"role": "user", "content": "Stop hook feedback: commit first", INJECTED_KEY: "stop-hook"},
]


def by_category(facts: list[structural.StructuralFact]) -> dict[str, list[str]]:
    found: dict[str, list[str]] = {}
    for fact in facts:
        found.setdefault(fact.category, []).append(fact.text)
    return found


def test_facts_come_from_structure() -> None:
    facts = by_category(mine(SESSION))
    assert facts["latest_request"] == ["Fix the importer. Never touch the migrations folder."]
    assert facts["constraints"] == ["Never touch the migrations folder."]
    # Paths from an argument named like a path, and from the command line — not the program.
    assert set(facts["paths"]) == {"/repo/app/importer.py", "src/a.py"}
    assert set(facts["errors"]) == {"ValueError: bad row 7", "1 failed, 3 passed"}
    assert facts["urls"] == ["https://example.com/docs/importer"]
    # The failed call sits in the first half: its errors are early errors too, oldest first.
    assert facts["early_errors"] == ["ValueError: bad row 7", "1 failed, 3 passed"]
    assert not {"missing_paths", "definitions", "skills", "decisions"} & set(facts)


def test_an_absolute_path_of_three_parts_is_a_path_and_a_sed_expression_is_not() -> None:
    # /w/build/release once read as a sed expression like s/a/b/ and was left out.
    command = "ls /w/build/release && sed -i s/a/b/g src/x.py && grep /a/b/ y/ab/cd/"
    assert structural.command_paths(command) == ["/w/build/release", "src/x.py"]


def test_hook_output_and_wrappers_are_not_the_user() -> None:
    found = latest_request(SESSION)
    assert found is not None and found[0] == 1


def test_recall_counts_what_survives() -> None:
    facts = mine(SESSION)
    assert structural_recall(facts, SESSION).ratio == 1.0
    kept = structural_recall(facts, SESSION[:2])
    assert kept.found == {"latest_request": 1, "constraints": 1}
    assert {fact.category for fact in kept.lost} == {"paths", "errors", "urls", "early_errors"}
    assert kept.ratio == pytest.approx(2 / 9)
    assert kept.ratio_of(structural.BASE_CATEGORIES) == pytest.approx(2 / 7)


def test_the_measure_shares_no_code_with_the_summariser() -> None:
    # Every module of the package, lazy imports inside functions included: the engine's
    # message helpers and the package itself, nothing else of ours.
    imported: set[str] = set()
    package = Path(structural.__file__).parent
    modules = sorted(package.glob("*.py"))
    assert {path.name for path in modules} >= {"__init__.py", "mining.py", "scoring.py"}
    for path in modules:
        tree = ast.parse(path.read_text())
        imported |= {
            node.module
            for node in ast.walk(tree)
            if isinstance(node, ast.ImportFrom) and node.module is not None
        } | {
            alias.name
            for node in ast.walk(tree)
            if isinstance(node, ast.Import)
            for alias in node.names
        }
    ours = {name for name in imported if name.startswith("compaction")}
    outside = {name for name in ours if not name.startswith("compaction.lab.structural")}
    assert outside == {"compaction.messages"}


def test_evaluate_reports_structural_recall_beside_recall() -> None:
    evaluation = evaluate(SESSION, target_ratio=0.5)
    for row in evaluation.rows():
        assert 0.0 <= row["recall_structural"] <= 1.0
    table = {entry["strategy"]: entry for entry in aggregate([evaluation.summary_row()])}
    assert table[COMPACTION]["mean_recall_structural"] == evaluation.rows()[3]["recall_structural"]


@pytest.mark.skipif(not CORPUS.is_dir(), reason="the shared corpus is not here")
def test_the_pipeline_beats_head_tail_matched_on_the_spotter_session() -> None:
    from compaction.formats import load_conversations

    path = CORPUS / "claudecode-spotter__258c7280-ae70-4798-800f-63464d01a85d.jsonl"
    conversation = load_conversations(path)[0]
    evaluation = evaluate(conversation, strategies=(COMPACTION, MATCHED))
    ours = evaluation.outcomes[COMPACTION].structural
    theirs = evaluation.outcomes[MATCHED].structural
    assert ours is not None and theirs is not None
    # On the categories this test was written for, by the margin it was written with; in
    # total (with the categories added since) ahead too.
    base = structural.BASE_CATEGORIES
    assert ours.ratio_of(base) >= theirs.ratio_of(base) + 0.15
    assert ours.ratio > theirs.ratio


def test_sweep_points_carry_structural_recall() -> None:
    from compaction.compactor import compress
    from compaction.config import CompactionConfig
    from compaction.lab.samples import load_sample
    from compaction.lab.sweep.run import sweep

    messages = load_sample("fix-failing-tests").messages
    base = CompactionConfig(context_length=4_000)
    result = sweep([messages], {"tail_token_ratio": [0.1, 0.3]}, base_config=base)
    for point in result.points:
        compacted = compress(messages, base.replace(**point.params))
        expected = structural_recall(mine(messages), compacted.messages).ratio
        assert point.recall_structural == pytest.approx(expected, abs=1e-4)
        assert point.row()["recall_structural"] == point.recall_structural
