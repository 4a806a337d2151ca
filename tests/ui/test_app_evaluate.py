"""AppTest of the Evaluate page: the four strategies on a sample (checked against
`compaction.lab.evaluate`), the scatter, the lost facts, and a folder with a progress bar."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

from app_helpers import ROOT, dataframe_with, open_app

from compaction.config import CompactionConfig
from compaction.lab.evaluate import STRATEGY_NAMES, evaluate
from compaction.lab.samples import get_sample, load_sample
from compaction.summarizers.extractive import ExtractiveSummarizer

EVALUATE = ROOT / "app_pages" / "evaluate.py"


def test_every_strategy_on_the_loaded_sample() -> None:
    messages = load_sample("orphans").messages
    expected = evaluate(messages, config=CompactionConfig(), summarizer=ExtractiveSummarizer())
    at = open_app(EVALUATE, sample="orphans")
    table = dataframe_with(at, "strategy")
    assert list(table["strategy"]) == list(STRATEGY_NAMES)
    assert list(table["tokens"]) == [row["tokens"] for row in expected.rows()]
    assert list(table["recall"]) == [row["recall"] for row in expected.rows()]
    # The pipeline's size against the target, and the head-tail row matched to that size.
    target = expected.target_tokens
    assert list(table["× target"]) == [round(r["tokens"] / target, 2) for r in expected.rows()]
    tokens = dict(zip(table["strategy"], table["tokens"], strict=True))
    assert tokens["head-tail-matched"] <= tokens["compaction"]
    assert any("head-tail-matched" in c.value for c in at.caption)
    traces = json.loads(at.get("plotly_chart")[0].proto.spec)["data"]
    assert [t["name"] for t in traces] == list(STRATEGY_NAMES)
    titles = [e.label for e in at.expander if e.label.split(":")[0] in STRATEGY_NAMES]
    assert titles == [
        f"{name}: {len(expected.lost_facts(name))} fact(s) lost" for name in STRATEGY_NAMES
    ]


def test_folder_aggregate(tmp_path: Path) -> None:
    for sample_id in ("orphans", "quick-fix"):
        shutil.copy(get_sample(sample_id).path, tmp_path)
    (tmp_path / "notes.txt").write_text("not a conversation")
    at = open_app(EVALUATE)
    at.text_input(key="evaluate_folder").set_value(str(tmp_path))
    at.button(key="evaluate_folder_run").click()
    at.run()
    assert not at.exception
    table = dataframe_with(at, "over target")
    assert list(table["strategy"]) == list(STRATEGY_NAMES)
    assert set(table["sessions"]) == {2}
    # Rounded figures under words, not raw floats under snake_case keys.
    assert "mean_recall" not in table.columns and "recall: latest request" in table.columns
    assert all(value == round(value, 1) for value in table["savings %"])
    assert any("notes.txt" in str(w.value) for w in at.warning)


def test_missing_folder_is_an_error(tmp_path: Path) -> None:
    at = open_app(EVALUATE)
    at.text_input(key="evaluate_folder").set_value(str(tmp_path / "nope"))
    at.button(key="evaluate_folder_run").click()
    at.run()
    assert not at.exception
    assert any("nope" in str(e.value) for e in at.error)


def test_the_token_target_travels_in_the_url() -> None:
    at = open_app(EVALUATE, sample="orphans", evaluate_ratio="0.5")
    assert at.slider(key="evaluate_ratio").value == 0.5
    messages = load_sample("orphans").messages
    expected = evaluate(messages, target_ratio=0.5, summarizer=ExtractiveSummarizer())
    assert f"target {expected.target_tokens:,}" in " ".join(str(c.value) for c in at.caption)


def test_peers_chosen_on_the_page_are_measured_beside_ours() -> None:
    messages = load_sample("orphans").messages
    peers = ["hermes", "codex", "observation-masking"]
    expected = evaluate(
        messages,
        [*STRATEGY_NAMES, *peers],
        config=CompactionConfig(),
        summarizer=ExtractiveSummarizer(),
    )
    at = open_app(EVALUATE, sample="orphans")
    at.multiselect(key="evaluate_peers").set_value(peers)
    at.run()
    assert not at.exception
    table = dataframe_with(at, "strategy")
    assert list(table["strategy"]) == [*STRATEGY_NAMES, *peers]
    rows = {row["strategy"]: row for row in expected.rows()}
    for name in peers:
        shown = table[table["strategy"] == name].iloc[0]
        assert shown["tokens"] == rows[name]["tokens"]
        assert shown["openai errors"] == rows[name]["openai_errors"]
        assert shown["valid"] == rows[name]["valid"]
    assert any("only the policy is the peer's" in c.value for c in at.caption)
