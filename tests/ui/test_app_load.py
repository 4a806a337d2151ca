"""AppTest of loading: the sample picker, uploads (bad, multi-conversation) and pasted JSON."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from app_helpers import click, metrics, open_app, shown_texts

from compaction.lab.samples import list_samples

CORPUS = Path(__file__).resolve().parents[2].parent / "shared" / "corpus"


def test_sample_picker_loads_with_description_and_suggested_settings() -> None:
    at = open_app()
    # The app opens on the teaching example, with the Load panel open to load another.
    assert at.session_state["loaded_conversation"].source == "sample:teaching-example"
    assert at.expander[0].proto.expanded
    sample = next(s for s in list_samples() if s.settings.get("focus"))
    at.selectbox(key="load_sample_id").set_value(sample.id)
    at.run()
    assert sample.description in [str(c.value) for c in at.caption]
    click(at, "load_sample_btn")
    assert at.text_input(key="p_focus").value == sample.settings["focus"]
    assert "Head messages" in metrics(at)
    # The page's URL names the sample, so copying it shares this view.
    assert at.query_params["sample"] == sample.id


def test_bad_upload_shows_the_importer_error() -> None:
    at = open_app()
    at.file_uploader(key="load_upload").set_value(
        ("broken.json", b'{"not": "a conversation"}', "application/json")
    )
    at.run()
    assert not at.exception
    errors = [str(e.value) for e in at.error]
    assert any(
        "Could not import broken.json" in e and "not a conversation format" in e for e in errors
    )


def test_multi_conversation_upload_offers_a_picker() -> None:
    document = [
        {
            "id": "a",
            "conversations": [
                {"from": "human", "value": "first question"},
                {"from": "gpt", "value": "first answer"},
            ],
        },
        {
            "id": "b",
            "conversations": [
                {"from": "human", "value": "second question"},
                {"from": "gpt", "value": "second answer"},
            ],
        },
    ]
    at = open_app()
    at.file_uploader(key="load_upload").set_value(
        ("two.json", json.dumps(document).encode(), "application/json")
    )
    at.run()
    picker = at.selectbox(key="load_pick")
    assert len(picker.options) == 2
    # The run that stored the upload reran once, so the loader already says what is loaded.
    assert at.expander[0].label == "Loaded: first question — load another"
    picker.set_value(1)
    at.run()
    assert not at.exception
    texts = " ".join(str(m.value) for m in at.markdown)
    assert "2 messages" in texts
    assert any("second question" in text for text in shown_texts(at))


def test_pasted_json_loads_and_bad_paste_errors() -> None:
    at = open_app(sample="orphans")
    at.text_area(key="load_paste").set_value("[{'role': broken")
    click(at, "load_paste_btn")
    assert any("Could not import the pasted text" in str(e.value) for e in at.error)

    messages = [
        {"role": "user", "content": "<script>alert(1)</script>"},
        {"role": "assistant", "content": "<img src=x onerror=alert(1)>"},
    ]
    at.text_area(key="load_paste").set_value(json.dumps(messages))
    click(at, "load_paste_btn")
    assert "Pasted conversation" in " ".join(str(m.value) for m in at.markdown)
    assert "sample" not in at.query_params  # the link no longer names the sample it replaced
    # Message text is shown as plain text (st.text or st.code), never as markdown or HTML.
    assert "<script>alert(1)</script>" in shown_texts(at)
    assert not any("<script>" in str(m.value) for m in at.markdown)


def test_the_app_loader_shows_the_import_report_and_the_agents_compaction() -> None:
    path = CORPUS / "claudecode-spotter__258c7280-ae70-4798-800f-63464d01a85d.jsonl"
    if not path.is_file():
        pytest.skip(f"the shared corpus is absent ({CORPUS})")
    at = open_app()
    at.file_uploader(key="load_upload").set_value((path.name, path.read_bytes(), "text/plain"))
    at.run()
    assert not at.exception
    assert any(
        "compacted this session itself 1 time(s)" in str(info.value)
        and "message 229: claude-code, auto, 167,094 tokens before" in str(info.value)
        for info in at.info
    )
    assert any("1,863 record(s) read" in str(e.label) for e in at.expander)
    assert any("progress/hook_progress ×1,032" in str(t.value) for t in at.text)
