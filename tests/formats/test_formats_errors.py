"""Bad input: each case ends in a FormatError that names the file and what is wrong."""

from __future__ import annotations

from pathlib import Path

import pytest
from format_helpers import DATA

from compaction.errors import FormatError, UnknownFormatError
from compaction.formats import FORMATS, detect_format, load_conversation, load_for_cli
from compaction.formats import source as source_module


def test_empty_file(tmp_path: Path) -> None:
    path = tmp_path / "empty.jsonl"
    path.write_text("  \n")
    with pytest.raises(FormatError, match=r"empty\.jsonl: the file is empty"):
        load_conversation(path)


def test_binary_file(tmp_path: Path) -> None:
    path = tmp_path / "image.json"
    path.write_bytes(b"\x89PNG\r\n\x1a\n\x00\x00\x00")
    with pytest.raises(FormatError, match=r"image\.json: binary content"):
        load_conversation(path)


def test_not_utf8(tmp_path: Path) -> None:
    path = tmp_path / "latin1.md"
    path.write_bytes("#### café".encode("latin-1"))
    with pytest.raises(
        FormatError, match=r"latin1\.md: not UTF-8 text \(invalid byte at offset 8\)"
    ):
        load_conversation(path)


def test_file_over_the_size_limit_is_refused_before_reading(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = tmp_path / "big.jsonl"
    path.write_text('{"role": "user", "content": "hi"}\n' * 100)
    monkeypatch.setattr(source_module, "MAX_BYTES", 1000)
    with pytest.raises(FormatError, match=r"big\.jsonl: file is 0 MB; the limit is 0 MB"):
        load_conversation(path)


def test_invalid_json_names_line_and_column(tmp_path: Path) -> None:
    path = tmp_path / "broken.json"
    path.write_text('{\n  "messages": [\n    {"role": "user", "content": "hi",}\n  ]\n}\n')
    with pytest.raises(FormatError) as caught:
        load_conversation(path)
    assert caught.value.line == 3
    assert "broken.json: line 3: invalid JSON" in str(caught.value)
    assert "column" in str(caught.value)


def test_truncated_jsonl_line_is_a_warning_and_the_rest_is_imported(tmp_path: Path) -> None:
    lines = (DATA / "openai_messages.jsonl").read_text().splitlines()
    path = tmp_path / "cut.jsonl"
    path.write_text("\n".join([*lines, '{"role": "user", "content": "unfini']) + "\n")
    conversation = load_conversation(path)
    assert len(conversation.messages) == len(lines)
    assert any(w.startswith("line 6: ") and "truncated" in w for w in conversation.warnings)


def test_unknown_format_lists_every_format_tried(tmp_path: Path) -> None:
    path = tmp_path / "data.json"
    path.write_text('{"rows": [1, 2, 3]}')
    with pytest.raises(UnknownFormatError) as caught:
        detect_format(path)
    message = str(caught.value)
    assert message.startswith(f"{path}: not a conversation format")
    for name in FORMATS:
        assert f"{name}: " in message


def test_missing_file_and_directory(tmp_path: Path) -> None:
    with pytest.raises(FormatError, match="file not found"):
        load_conversation(tmp_path / "nope.json")
    with pytest.raises(FormatError, match="is a directory"):
        load_conversation(tmp_path)


def test_a_missing_path_given_as_a_string_is_a_missing_file(tmp_path: Path) -> None:
    # A string may be content or a path; one that names a file is never read as content.
    for missing in (str(tmp_path / "nope.json"), "session.jsonl", "logs/run"):
        with pytest.raises(FormatError, match=f"{missing}: file not found"):
            load_conversation(missing)
    with pytest.raises(UnknownFormatError, match="plain text"):
        load_conversation("just a sentence")


def test_forced_format_that_does_not_fit() -> None:
    with pytest.raises(FormatError, match=r"not codex content: not JSON Lines"):
        load_conversation(DATA / "hermes_session.json", format="codex")
    with pytest.raises(FormatError, match=r"unknown format 'nope'"):
        load_for_cli(DATA / "hermes_session.json", "nope", None)


def test_index_out_of_range() -> None:
    with pytest.raises(FormatError, match=r"index 5 is out of range: the file holds 2"):
        load_conversation(DATA / "sharegpt_hermes.jsonl", index=5)
    with pytest.raises(FormatError, match=r"--index 2 is out of range"):
        load_for_cli(DATA / "sharegpt_hermes.jsonl", "auto", 2)


def test_load_for_cli_warns_when_choosing_the_first_of_many() -> None:
    conversation = load_for_cli(DATA / "sharegpt_hermes.jsonl", "auto", None)
    assert conversation.format == "sharegpt"
    assert "holds 2 conversations" in conversation.warnings[0]
    chosen = load_for_cli(DATA / "sharegpt_hermes.jsonl", "sharegpt", 1)
    assert chosen.messages[0]["content"] == "List files."


def test_content_given_as_text_and_bytes() -> None:
    text = (DATA / "anthropic_messages.json").read_text()
    from_text = load_conversation(text)
    from_bytes = load_conversation(text.encode())
    assert from_text.messages == from_bytes.messages
    assert from_text.source is None


@pytest.mark.parametrize(
    ("content", "expected"),
    [
        # The audit's in/missing_role.json and in/role_num.json.
        (
            '[{"role": "user", "content": "hi"}, {"content": "no role here"},'
            ' {"role": "assistant", "content": "ok"}]',
            'message 1: missing "role"',
        ),
        ('[{"role": 5, "content": "x"}]', "message 0: role must be a string, got 5"),
        (
            '{"messages": [{"role": "user", "content": "hi"}, {"role": "human", "content": "x"}]}',
            "message 1: unknown role 'human'",
        ),
        (
            '[{"role": "user", "content": "hi"}, 7, {"role": "user", "content": "x"}]',
            "message 1: expected a message object, got a number",
        ),
    ],
)
def test_a_message_list_with_a_broken_message_names_it(
    tmp_path: Path, content: str, expected: str
) -> None:
    # Clearly an OpenAI message list: naming the broken message beats listing ten formats.
    path = tmp_path / "messages.json"
    path.write_text(content)
    with pytest.raises(FormatError) as caught:
        load_conversation(path)
    assert not isinstance(caught.value, UnknownFormatError)
    message = str(caught.value)
    assert message.startswith(f"{path}: {expected} (read as a list of OpenAI chat messages")
    assert "Tried:" not in message
    with pytest.raises(FormatError, match=f"not openai content: {expected}"):
        load_conversation(path, format="openai")


def test_a_jsonl_message_list_with_a_broken_line_names_the_line(tmp_path: Path) -> None:
    path = tmp_path / "messages.jsonl"
    path.write_text('{"role": "user", "content": "a"}\n\n{"content": "b"}\n{"role": "user"}\n')
    with pytest.raises(FormatError) as caught:
        load_conversation(path)
    assert caught.value.line == 3
    assert f'{path}: line 3: missing "role"' in str(caught.value)


def test_a_jsonl_line_that_is_valid_json_but_no_object_is_not_invalid_json(
    tmp_path: Path,
) -> None:
    # The audit's in/jsonl_mixed.jsonl: line 2 is `[1,2]`, which parses; it is just no object.
    path = tmp_path / "mixed.jsonl"
    path.write_text('{"role":"user","content":"a"}\n[1,2]\n{"role":"assistant","content":"b"}\n')
    with pytest.raises(FormatError) as caught:
        load_conversation(path)
    assert caught.value.line == 2
    assert str(caught.value) == (
        f"{path}: line 2: valid JSON, but an array, not an object: JSON Lines needs one object "
        "per line"
    )


def test_a_broken_pretty_printed_file_is_still_invalid_json(tmp_path: Path) -> None:
    # Its lines parse as a few stray values (`"b"`), not as JSON Lines with a stray line.
    path = tmp_path / "pretty.json"
    path.write_text('[\n  "a",\n  "b"\n  }\n')
    with pytest.raises(FormatError, match="invalid JSON"):
        load_conversation(path)


def test_an_integer_of_5000_digits_is_a_format_error_not_a_value_error(tmp_path: Path) -> None:
    path = tmp_path / "big.json"
    path.write_text('[{"role": "user", "content": "hi", "n": ' + "9" * 5_000 + "}]")
    with pytest.raises(FormatError, match=r"big\.json: the JSON holds an integer too long"):
        load_conversation(path)
    lines = tmp_path / "big.jsonl"
    lines.write_text(
        '{"role": "user", "content": "hi"}\n{"n": ' + "9" * 5_000 + "}\n"
        '{"role": "assistant", "content": "hello"}\n'
    )
    conversation = load_conversation(lines)
    assert any("line 2" in w and "4,300 digits" in w for w in conversation.warnings)
