"""AppTest of the Inspect page's viewer features (issue 17 part B): tool output decoded, one
palette, context composition, find and filter, tool calls paired with results, and the
side-by-side transcript."""

from __future__ import annotations

import json

import pandas  # noqa: F401  (imported before any page runs: see test_app_untrusted.py)
from app_helpers import click, dataframe_with, library_result, open_app, shown_texts
from streamlit.testing.v1 import AppTest

from compaction.config import CompactionConfig
from compaction.lab.samples import load_sample
from compaction.messages import content_text
from compaction.result import FOLDED, PREVIOUS_SUMMARY
from compaction.text.tool_output import decode_tool_output, parse_tool_output
from compaction.tokens import make_counter
from compaction.ui.composition import CONTENT_PARTS
from compaction.ui.final_view import FINAL_TABS_KEY
from compaction.ui.find_filter import search_texts
from compaction.ui.overview_view import OVERVIEW_TABS_KEY
from compaction.ui.palette import COMPOSITION_LABELS
from compaction.ui.side_by_side import align
from compaction.ui.tool_pairs import PAIR_KEY

SAMPLE = "fix-failing-tests"
# Message 6 of the sample is a GitHub Actions log stored as {"output": "test\tRun tests\t…\n…"}.
WRAPPED = 6


def _run(at: AppTest) -> AppTest:
    at.run()
    assert not at.exception, [e.value for e in at.exception]
    return at


def test_detail_pane_shows_a_wrapped_output_as_its_text_with_real_newlines() -> None:
    raw = content_text(load_sample(SAMPLE).messages[WRAPPED])
    assert raw.startswith('{"output": "test\\tRun tests')  # stored as one escaped line
    at = open_app(sample=SAMPLE)
    at.session_state["inspect_open"] = WRAPPED
    _run(at)
    decoded = decode_tool_output(raw)
    shown = [text for text in shown_texts(at) if text.startswith("test\tRun tests")]
    assert shown, "the decoded output is not on the page"
    assert "\n" in shown[0] and "\\n" not in shown[0] and '{"output"' not in shown[0]
    assert decoded.startswith(shown[0].removesuffix("\n…"))
    assert any("decoded from JSON" in str(c.value) for c in at.caption)

    at.toggle(key="tool_output_formatted").set_value(False)  # raw: exactly as stored
    _run(at)
    assert any(text.startswith('{"output": "test\\tRun tests') for text in shown_texts(at))


def test_table_previews_and_phase_1_columns_are_decoded() -> None:
    at = open_app(sample=SAMPLE)
    table = dataframe_with(at, "preview")
    preview = table.loc[table["#"] == WRAPPED, "preview"].iloc[0]
    assert preview.startswith("test Run tests") and '{"output"' not in preview
    assert not any('{"output"' in str(p) for p in table["preview"])
    click(at, "step_1")
    originals = dataframe_with(at, "original output")["original output"]
    assert len(originals) and not any('{"output"' in str(text) for text in originals)
    assert not any("\\n" in str(text) for text in originals)


def test_composition_adds_up_to_the_context_before_and_after() -> None:
    at = click(open_app(sample=SAMPLE), "step_all")
    at.session_state[FINAL_TABS_KEY] = "Context composition"
    _run(at)
    table = dataframe_with(at, "After compaction tokens")
    labels = list(table["part"])
    content = [labels.index(COMPOSITION_LABELS[p]) for p in CONTENT_PARTS]
    before = table["Before compaction tokens"]
    after = table["After compaction tokens"]
    config = CompactionConfig(context_length=128_000)  # the sample's suggested window
    counter = make_counter(config.counter, config.model)
    messages = load_sample(SAMPLE).messages
    expected = library_result(SAMPLE, context_length=128_000)
    assert sum(int(before[i]) for i in content) == sum(counter.count_message(m) for m in messages)
    assert sum(int(after[i]) for i in content) == sum(
        counter.count_message(m) for m in expected.messages
    )
    assert sum(int(after[i]) for i in content) == expected.tokens_after
    for column in (before, after):  # used + free + reserve fills the window exactly
        assert sum(int(value) for value in column) == 128_000
    summary_row = labels.index(COMPOSITION_LABELS["summary"])
    assert int(after[summary_row]) > 0 and int(before[summary_row]) == 0
    results = labels.index(COMPOSITION_LABELS["tool_results"])
    assert int(after[results]) < int(before[results])  # Phase 1 and the summary took outputs out


def test_find_and_filters_leave_exactly_the_matching_rows() -> None:
    messages = load_sample(SAMPLE).messages
    at = open_app(sample=SAMPLE)
    at.text_input(key="find_query").input("IntegrityError")
    _run(at)
    texts = search_texts(messages)
    expected = [i for i, text in enumerate(texts) if "integrityerror" in text]
    assert expected and len(expected) < len(messages)
    assert list(dataframe_with(at, "preview")["#"]) == expected
    assert any(
        f"{len(expected)} of {len(messages)} messages match" in str(c.value) for c in at.caption
    )

    at.multiselect(key="find_roles").set_value(["tool"])
    _run(at)
    tool_rows = [i for i in expected if messages[i]["role"] == "tool"]
    assert list(dataframe_with(at, "preview")["#"]) == tool_rows

    at.text_input(key="find_query").input("")
    at.multiselect(key="find_roles").set_value([])
    at.multiselect(key="find_regions").set_value(["head"])
    _run(at)
    assert list(dataframe_with(at, "preview")["#"]) == [0, 1, 2]  # the protected head

    at.multiselect(key="find_regions").set_value([])
    _run(at)
    reads = [
        i
        for i, m in enumerate(messages)
        if any(c["function"]["name"] == "read_file" for c in m.get("tool_calls") or [])
    ]
    assert reads
    at.multiselect(key="find_tools").set_value(["read_file"])
    _run(at)
    shown = list(dataframe_with(at, "preview")["#"])
    # A call and the result that answers it both involve the tool.
    calls = {c["id"] for i in reads for c in messages[i]["tool_calls"]}
    answers = [i for i, m in enumerate(messages) if m.get("tool_call_id") in calls]
    assert shown == sorted(reads + answers)


def test_fate_filter_follows_the_run_on_view() -> None:
    at = click(open_app(sample=SAMPLE), "step_all")
    expected = library_result(SAMPLE, context_length=128_000)
    at.multiselect(key="find_fates").set_value(["summarised"])
    _run(at)
    rows = list(dataframe_with(at, "preview")["#"])
    assert rows == sorted(i for i, fate in expected.fates.items() if fate == "summarised")
    assert rows


def test_tool_calls_are_paired_with_their_results() -> None:
    messages = load_sample(SAMPLE).messages
    calls = [(i, c) for i, m in enumerate(messages) for c in m.get("tool_calls") or []]
    at = open_app(sample=SAMPLE)
    assert not any("result #" in frame.value.columns for frame in at.dataframe)  # tab closed
    at.session_state[OVERVIEW_TABS_KEY] = "Tool calls"
    _run(at)
    table = dataframe_with(at, "result #")
    assert len(table) == len(calls)
    results = {m["tool_call_id"]: i for i, m in enumerate(messages) if m["role"] == "tool"}
    assert list(table["result #"]) == [results[c["id"]] for _, c in calls]
    assert list(table["tool"]) == [c["function"]["name"] for _, c in calls]
    # Open the pair whose result is the wrapped log: the unit shows arguments and decoded text.
    row = next(n for n, (_, c) in enumerate(calls) if results[c["id"]] == WRAPPED)
    at.session_state[PAIR_KEY] = row
    _run(at)
    arguments = json.dumps(json.loads(calls[row][1]["function"]["arguments"]), indent=2)
    assert arguments in [str(c.value) for c in at.code]
    decoded = parse_tool_output(content_text(messages[WRAPPED]))
    assert any(text.startswith(decoded.text[:200]) for text in shown_texts(at))
    status = table["status"].iloc[row]
    assert status.endswith(f"(exit {decoded.exit_code})") if decoded.exit_code is not None else True


def test_detail_pane_shows_a_call_with_its_result() -> None:
    messages = load_sample(SAMPLE).messages
    call_at = next(
        i
        for i in range(len(messages))
        if messages[i].get("tool_calls")
        and messages[i + 1].get("role") == "tool"
        and i + 1 == WRAPPED
    )
    at = open_app(sample=SAMPLE)
    at.session_state["inspect_open"] = call_at
    _run(at)
    assert any(f"result #{WRAPPED}" in str(c.value) for c in at.caption)
    assert any(text.startswith("test\tRun tests") for text in shown_texts(at))


def test_side_by_side_pairs_the_summarised_span_with_the_summary() -> None:
    messages = load_sample(SAMPLE).messages
    expected = library_result(SAMPLE, context_length=128_000)
    rows = align(messages, expected)
    folded = sorted(i for i, f in expected.fates.items() if f in (FOLDED, PREVIOUS_SUMMARY))
    summary_rows = [row for row in rows if row.kind == "summary"]
    assert len(summary_rows) == 1 and list(summary_rows[0].left) == folded
    summary_text = content_text(expected.messages[summary_rows[0].right or 0])
    assert "CONTEXT COMPACTION" in summary_text
    assert sorted(i for row in rows for i in row.left) == list(range(len(messages)))
    assert sorted(r.right for r in rows if r.right is not None) == list(
        range(len(expected.messages))
    )
    one_liners = [row for row in rows if row.fate == "summarised"]
    assert one_liners and all(row.kind == "changed" and len(row.left) == 1 for row in one_liners)

    at = click(open_app(sample=SAMPLE), "step_all")
    at.session_state[FINAL_TABS_KEY] = "Side by side"
    _run(at)
    number = rows.index(summary_rows[0])
    label = str(at.button(key=f"side_by_side_left_{number}").label)
    assert "summarised span → summary" in label
    right = str(at.button(key=f"side_by_side_right_{number}").label)
    assert right.startswith(f"out #{summary_rows[0].right}")
    texts = [str(t.value) for t in at.text]
    assert any(t.startswith(f"{len(folded)} messages summarised (#{folded[0]}") for t in texts)
    assert any("CONTEXT COMPACTION" in t for t in texts)
    # A click on the right side of a one-liner's row opens its text diff.
    liner = rows.index(one_liners[0])
    click(at, f"side_by_side_right_{liner}")
    diff = next(str(c.value) for c in at.code if str(c.value).startswith("--- original"))
    assert "+++ compacted" in diff
    line = content_text(expected.messages[one_liners[0].right or 0])
    assert f"+{line}" in diff


def test_composition_counts_the_tool_definitions_a_session_records() -> None:
    tools = [
        {
            "type": "function",
            "function": {
                "name": "run_tests",
                "description": "Run the project's test suite and report failures. " * 5,
                "parameters": {"type": "object", "properties": {"path": {"type": "string"}}},
            },
        }
    ]
    messages = [
        {"role": "system", "content": "You are a coding agent."},
        {"role": "user", "content": "Run the tests."},
        {"role": "assistant", "content": "Running them."},
    ]
    at = open_app()
    payload = json.dumps({"messages": messages, "tools": tools}).encode()
    at.file_uploader(key="load_upload").set_value(("tools.json", payload, "application/json"))
    at.session_state[OVERVIEW_TABS_KEY] = "Context composition"
    _run(at)
    table = dataframe_with(at, "Before compaction tokens")
    parts = dict(zip(table["part"], table["Before compaction tokens"], strict=True))
    definitions = int(parts[COMPOSITION_LABELS["tool_definitions"]])
    assert definitions > 50
    counter = make_counter(CompactionConfig().counter, CompactionConfig().model)
    content = sum(int(parts[COMPOSITION_LABELS[p]]) for p in CONTENT_PARTS)
    assert content == definitions + sum(counter.count_message(m) for m in messages)
