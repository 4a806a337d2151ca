"""Every importer on the real transcripts in ../shared/corpus, checked against the source itself.

Expected counts are computed from the raw file with plain json, independently of the importers.
"""

from __future__ import annotations

import json
import re

from format_helpers import assert_paired, corpus_file, roles

from compaction.formats import detect_format, load_conversation, load_conversations
from compaction.messages import content_text, tool_calls


def test_claude_code_session() -> None:
    path = corpus_file("claudecode-claudereliability-py2rust__transcript.jsonl")
    records = [json.loads(line) for line in path.read_text().splitlines()]
    conversation = load_conversation(path)
    assert detect_format(path).name == conversation.format == "claude-code"
    blocks = [
        b
        for r in records
        if isinstance(r.get("message", {}).get("content"), list)
        for b in r["message"]["content"]
    ]
    uses = [b["id"] for b in blocks if b["type"] == "tool_use"]
    results = [b["tool_use_id"] for b in blocks if b["type"] == "tool_result"]
    calls = [c["id"] for m in conversation.messages for c in tool_calls(m)]
    assert calls == uses  # every call, in source order
    assert [m["tool_call_id"] for m in conversation.messages if m["role"] == "tool"] == results
    message_ids = {r["message"]["id"] for r in records if r["type"] == "assistant"}
    assert roles(conversation).count("assistant") == len(message_ids)  # streamed lines merged
    prompts = [
        r for r in records if r["type"] == "user" and isinstance(r["message"]["content"], str)
    ]
    assert roles(conversation).count("user") == len(prompts)
    assert len(conversation.messages) == len(message_ids) + len(prompts) + len(results)
    assert conversation.messages[0]["content"] == prompts[0]["message"]["content"]
    last_text = records[-1]["message"]["content"][0]["text"]
    assert content_text(conversation.messages[-1]) == last_text
    defined, answered = assert_paired(conversation.messages)
    assert defined == answered
    assert conversation.metadata["model"] == "claude-opus-4-5-20251101"
    assert conversation.report is not None
    skipped = conversation.report.skipped["queue-operation"]
    assert (skipped.count, skipped.lines) == (1, [1])


def test_openhands_instances() -> None:
    path = corpus_file("openhands-multiswebench__output.jsonl")
    instances = [json.loads(line) for line in path.read_text().splitlines()]
    conversations = load_conversations(path)
    assert detect_format(path).name == "openhands"
    assert len(conversations) == len(instances) == 3
    for instance, conversation in zip(instances, conversations, strict=True):
        history = instance["history"]
        responses = {
            e["tool_call_metadata"]["model_response"]["id"]
            for e in history
            if "action" in e and e.get("tool_call_metadata")
        }
        observations = [e for e in history if "observation" in e and e.get("tool_call_metadata")]
        assert roles(conversation).count("assistant") == len(responses)
        assert roles(conversation).count("tool") == len(observations)
        assert conversation.messages[0]["role"] == "system"
        assert conversation.messages[0]["content"] == history[0]["args"]["content"]
        assert conversation.messages[1]["content"] == history[1]["args"]["content"]
        assert conversation.title == instance["instance_id"]
        assert conversation.tools == history[0]["args"]["tools"]
        defined, answered = assert_paired(conversation.messages)
        # `finish` calls get no observation in the source and stay unanswered.
        unanswered = {
            c["id"]
            for m in conversation.messages
            for c in tool_calls(m)
            if c["function"]["name"] == "finish"
        }
        assert defined - answered == unanswered
    assert [len(c.messages) for c in conversations] == [47, 68, 101]


def _traj(name: str) -> tuple[dict, object]:  # type: ignore[type-arg]
    path = corpus_file(name)
    return json.loads(path.read_text()), path


def test_swe_agent_function_calling_traj() -> None:
    source, path = _traj("sweagent-demo-fc__marshmallow-code__marshmallow-1867.traj")
    conversation = load_conversation(path)
    assert detect_format(path).name == "swe-agent"
    history = source["history"]
    assert roles(conversation) == [m["role"] for m in history]
    assert [m["content"] for m in conversation.messages] == [m["content"] for m in history]
    # The trajectory reuses call ids; each reuse is renamed `<id>_N`, with its result, and said.
    ids = [m["tool_call_id"] for m in conversation.messages if m["role"] == "tool"]
    source_ids = [m["tool_call_ids"][0] for m in history if m["role"] == "tool"]
    assert [i if i in source_ids else i.rsplit("_", 1)[0] for i in ids] == source_ids
    renamed = [i for i in ids if i not in source_ids]
    assert len(renamed) == len(source_ids) - len(set(source_ids)) == 4
    assert sum("reused the id" in w for w in conversation.warnings) == 4
    defined, answered = assert_paired(conversation.messages)
    assert defined == answered
    assert sum(len(tool_calls(m)) for m in conversation.messages) == 13
    assert conversation.metadata["style"] == "function-calling"


def test_swe_agent_text_action_traj() -> None:
    source, path = _traj("sweagent-testdata-gpt4__pydicom__pydicom-1458.traj")
    conversation = load_conversation(path)
    history = source["history"]
    assert len(conversation.messages) == len(history) == 26
    assert roles(conversation) == [m["role"] for m in history]
    assert not any(tool_calls(m) for m in conversation.messages)
    assert conversation.messages[-1]["content"] == history[-1]["content"]
    assert conversation.metadata["style"] == "text-action"
    assert conversation.title is not None and "Pixel Representation" in conversation.title


def test_tau_bench_runs_are_200_openai_conversations() -> None:
    path = corpus_file("taubench__gpt-4o-airline.json")
    runs = json.loads(path.read_text())
    conversations = load_conversations(path)
    assert detect_format(path).name == "openai"
    assert len(conversations) == len(runs) == 200
    assert sum(len(c.messages) for c in conversations) == 5308
    for run, conversation in zip(runs, conversations, strict=True):
        assert roles(conversation) == [m["role"] for m in run["traj"]]
        assert conversation.messages[0]["content"] == run["traj"][0]["content"]
        assert conversation.messages[-1]["content"] == run["traj"][-1]["content"]
        assert_paired(conversation.messages, unique_ids=False)  # τ-bench reuses ids
    assert load_conversation(path, index=7).title == f"task {runs[7]['task_id']}, trial 0"


def test_aider_history_sessions() -> None:
    path = corpus_file("aider-aficore__.aider.chat.history.md")
    text = path.read_text()
    conversations = load_conversations(path)
    assert detect_format(path).name == "aider"
    headers = re.findall(r"^# aider chat started at (.*)$", text, re.MULTILINE)
    # One session in the file has neither a prompt nor a reply; it is reported, not imported.
    assert len(conversations) == len(headers) - 1
    assert any("skipped 1 session" in w for w in conversations[0].warnings)
    # Prompts: runs of consecutive `#### ` lines (blank lines inside a run allowed).
    prompt_runs = 0
    previous = ""
    for line in text.splitlines():
        if line.startswith("#### ") and previous != "prompt":
            prompt_runs += 1
        if line.startswith("#### "):
            previous = "prompt"
        elif line.strip():
            previous = "other"
    assert sum(roles(c).count("user") for c in conversations) == prompt_runs
    first_prompt = next(line for line in text.splitlines() if line.startswith("#### "))
    assert conversations[0].messages[1]["content"] == first_prompt[5:].rstrip()
    assert conversations[0].messages[0]["role"] == "system"  # aider's startup output
    models = re.findall(r"^> Main model: (\S+)", text, re.MULTILINE)
    assert conversations[0].metadata["model"] == models[0]
    assert {c.metadata["model"] for c in conversations} == set(models)
