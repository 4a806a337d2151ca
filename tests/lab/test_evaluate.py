"""Strategy comparison on hand-written sessions with known facts, and the judged probe run
against the loopback OpenAI-compatible server."""

from __future__ import annotations

import copy
import json
from pathlib import Path

import pytest
from corpus_paths import corpus_files as all_corpus_files
from llm_server import LLMServer
from timeline_sessions import CONSTRAINT, FIRST_PATH, ISSUE, coding_session

from compaction.config import CompactionConfig
from compaction.errors import ConfigError
from compaction.lab.evaluate import STRATEGY_NAMES, aggregate, evaluate, parse_strategies
from compaction.lab.judge import QUESTIONS, fact_answered, judge, split_answer
from compaction.lab.probes import Fact
from compaction.lab.samples import SAMPLES_DIR
from compaction.lab.strategies import OUTPUT_KEEP_CHARS
from compaction.summary import SUMMARY_PREFIX

ROUGH = CompactionConfig(counter="rough")


def test_each_strategy_on_a_session_with_known_facts() -> None:
    messages = coding_session()
    before = copy.deepcopy(messages)
    evaluation = evaluate(messages, config=ROUGH)
    assert messages == before
    assert list(evaluation.outcomes) == list(STRATEGY_NAMES)
    assert evaluation.target_tokens == int(evaluation.tokens_before * 0.33)
    mined = {(fact.category, fact.text) for fact in evaluation.facts}
    assert ("files", FIRST_PATH) in mined
    assert ("identifiers", ISSUE) in mined
    assert any(category == "constraints" and CONSTRAINT in text for category, text in mined)

    head_tail = evaluation.outcomes["head-tail"]
    assert head_tail.tokens <= evaluation.target_tokens
    assert FIRST_PATH in {fact.text for fact in head_tail.recall.lost}  # written early, cut

    truncated = evaluation.outcomes["truncate-outputs"]
    tool_outputs = [m["content"] for m in truncated.messages if m["role"] == "tool"]
    assert max(len(text) for text in tool_outputs) <= OUTPUT_KEEP_CHARS + 3

    pruned = evaluation.outcomes["prune-only"]
    assert pruned.tokens < evaluation.tokens_before
    assert pruned.result is None

    full = evaluation.outcomes["compaction"]
    assert full.result is not None and full.result.summary is not None
    assert any(str(m.get("content", "")).startswith(SUMMARY_PREFIX) for m in full.messages)
    assert full.valid and full.problems == {"openai": [], "anthropic": []}
    # The full pipeline keeps more of what matters than the naive baselines at this target.
    assert full.recall.ratio > head_tail.recall.ratio
    assert full.recall.ratio > truncated.recall.ratio
    for outcome in evaluation.outcomes.values():
        assert outcome.tokens_before == evaluation.tokens_before
        assert outcome.recall.total == len(evaluation.facts)


def test_head_tail_breaks_tool_pairs_where_the_pipeline_stays_valid() -> None:
    messages = coding_session()
    broken = None
    for target in range(600, 3_000, 50):
        evaluation = evaluate(messages, ("head-tail", "compaction"), target, config=ROUGH)
        if not evaluation.outcomes["head-tail"].valid:
            broken = evaluation
            break
    assert broken is not None, "some target must cut a tool group"
    rules = {problem.rule for problem in broken.outcomes["head-tail"].problems["openai"]}
    assert "tool-result-without-call" in rules
    assert broken.outcomes["compaction"].valid
    assert broken.rows()[0]["openai_errors"] >= 1 and broken.rows()[1]["openai_errors"] == 0


def test_strategy_names_and_targets_are_checked() -> None:
    assert parse_strategies("compaction, head-tail") == ("compaction", "head-tail")
    with pytest.raises(ConfigError, match=r"unknown strategy 'summarise'.*choose from head-tail"):
        parse_strategies("head-tail,summarise")
    with pytest.raises(ConfigError, match="none given"):
        parse_strategies(" , ")
    with pytest.raises(ConfigError, match="target_ratio"):
        evaluate(coding_session(2), target_ratio=1.5, config=ROUGH)
    with pytest.raises(ConfigError, match="target_tokens"):
        evaluate(coding_session(2), target_tokens=0, config=ROUGH)
    explicit = evaluate(coding_session(2), ["prune-only"], target_tokens=500, config=ROUGH)
    assert explicit.target_tokens == 500 and list(explicit.outcomes) == ["prune-only"]


def test_aggregate_means_per_strategy_and_category() -> None:
    first = evaluate(coding_session(3), config=ROUGH).summary_row()
    second = evaluate(coding_session(6), config=ROUGH).summary_row()
    table = {row["strategy"]: row for row in aggregate([first, second])}
    assert set(table) == set(STRATEGY_NAMES)
    for name, row in table.items():
        a, b = first["strategies"][name], second["strategies"][name]
        assert row["sessions"] == 2
        assert row["mean_savings_pct"] == pytest.approx((a["savings_pct"] + b["savings_pct"]) / 2)
        assert row["mean_recall"] == pytest.approx((a["recall"] + b["recall"]) / 2)
        assert row["recall_files"] == pytest.approx((a["recall_files"] + b["recall_files"]) / 2)
        assert row["openai_failures"] == (a["openai_errors"] > 0) + (b["openai_errors"] > 0)
        ratios = [a["tokens"] / first["target_tokens"], b["tokens"] / second["target_tokens"]]
        assert row["mean_target_ratio"] == pytest.approx(sum(ratios) / 2)
        assert row["over_target"] == sum(ratio > 1 for ratio in ratios)
    # head-tail fits itself to the target; truncate-outputs does not try to.
    assert table["head-tail"]["over_target"] == 0
    assert table["truncate-outputs"]["mean_target_ratio"] > 1
    assert json.loads(json.dumps(first)) == first  # a digest travels between processes as is


def test_to_dict_is_json_ready_without_messages_by_default() -> None:
    evaluation = evaluate(coding_session(3), config=ROUGH)
    data = json.loads(json.dumps(evaluation.to_dict()))
    assert "messages" not in data["strategies"]["head-tail"]
    assert data["strategies"]["compaction"]["compaction"]["summary"]["Goal"]
    assert data["original_errors"] == {"openai": 0, "anthropic": 0}
    with_messages = evaluation.to_dict(include_messages=True)
    assert with_messages["strategies"]["prune-only"]["messages"]


# -- the judged probe run ------------------------------------------------------------------------

ANSWER = f"""## Recall
The report is issue {ISSUE}; FAILED tests/test_login.py::test_signup.
## Artifacts
Edited {FIRST_PATH}. Ran pytest tests/test_login.py -x.
## Continuation
The user wants the changelog updated for version v2.4.1.
## Decisions
{CONSTRAINT}
"""


def test_judge_grades_each_strategy_against_the_original_facts(llm_server: LLMServer) -> None:
    evaluation = evaluate(coding_session(), ("head-tail", "compaction"), config=ROUGH)
    llm_server.answer(ANSWER)
    judgement = judge(
        evaluation, "openai/judge-model", api_base=llm_server.base_url, api_key="sk-test-123"
    )
    assert evaluation.judgement is judgement
    assert len(llm_server.requests) == 2  # one request per strategy, no retries
    head_tail_prompt, compaction_prompt = (r.prompt_text for r in llm_server.requests)
    assert llm_server.requests[0].model == "judge-model"
    # Each strategy is judged on its own context, sent as a transcript.
    assert SUMMARY_PREFIX not in head_tail_prompt and SUMMARY_PREFIX in compaction_prompt
    assert all(f"## {name.title()}" in compaction_prompt for name in QUESTIONS)
    judged = judgement.strategies["compaction"]
    assert judged.error is None
    assert judged.scores["continuation"] == 1.0
    assert judged.scores["decisions"] == 1.0
    assert FIRST_PATH in judged.found["artifacts"]
    assert 0 < judged.scores["recall"] < 1  # the issue is quoted, the URL and versions are not
    assert "https://example.com/bugs/4182" in judged.missed["recall"]
    data = json.dumps(judgement.to_dict())
    assert "sk-test-123" not in data and "judge-model" in data
    assert judgement.rows()[1]["strategy"] == "compaction"


def test_judge_records_a_failing_model_per_strategy(llm_server: LLMServer) -> None:
    evaluation = evaluate(coding_session(2), ("head-tail", "prune-only"), config=ROUGH)
    llm_server.fail(401, "invalid api key")
    judgement = judge(evaluation, "openai/judge-model", api_base=llm_server.base_url, api_key="x")
    assert len(llm_server.requests) == 2  # num_retries=0: one request each
    for judged in judgement.strategies.values():
        assert judged.error is not None and "invalid api key" in judged.error.lower()
        assert judged.scores == {} and judged.score is None


def test_answers_are_split_by_heading_and_facts_matched_loosely() -> None:
    answers = split_answer("intro\n## Recall\nerror A\n### artifacts\nfile.py\n## Recall\nmore")
    assert answers["recall"] == "error A\nmore" and answers["artifacts"] == "file.py"
    assert answers["continuation"] == ""
    assert split_answer("no headings at all") == dict.fromkeys(QUESTIONS, "no headings at all")
    fact = Fact("latest_request", "Now update the changelog for version v2.4.1.", 0)
    assert fact_answered(fact, "They asked to update the CHANGELOG for version v2.4.1")
    assert not fact_answered(fact, "They asked about the login bug")


# -- the issue's bar, on every real session ------------------------------------------------------

_ROOT = Path(__file__).resolve().parents[2]
_CORPUS = _ROOT.parent / "shared" / "corpus"
_SESSION_FILES = sorted(
    [p for p in SAMPLES_DIR.iterdir() if p.suffix in (".json", ".jsonl") and p.name != "index.json"]
    + all_corpus_files()
)


@pytest.mark.parametrize("path", _SESSION_FILES, ids=lambda p: p.name[:48])
def test_compaction_keeps_at_least_the_facts_of_the_baselines_and_stays_valid(path: Path) -> None:
    # The corpus files join the samples when ../shared/corpus is present.
    from compaction.formats import load_conversations

    conversations = load_conversations(path)
    for position, conversation in enumerate(conversations):
        evaluation = evaluate(
            conversation, ("head-tail", "truncate-outputs", "compaction", "head-tail-matched")
        )
        outcomes = evaluation.outcomes
        ours = outcomes["compaction"]
        where = f"{path.name} #{position}"
        # head-tail-matched is head-tail with exactly the tokens the pipeline kept: the pipeline
        # must win on facts at equal size too, not only by keeping more tokens. Unless Fit had
        # to cut the protected head or tail to make the window (issue 21): the baselines are
        # held to no window (truncate-outputs keeps everything), and a cut loses facts.
        fit = ours.result.fit if ours.result is not None else None
        if fit is None or not fit.cuts:
            for baseline in ("head-tail", "truncate-outputs", "head-tail-matched"):
                assert ours.recall.found >= outcomes[baseline].recall.found, (where, baseline)
        assert outcomes["head-tail-matched"].tokens <= ours.tokens, where
        if not any(evaluation.original_errors.values()):
            assert ours.tokens <= evaluation.tokens_before, where
        else:
            # An invalid input (a call cut off by the end of the file) may need a stub result to
            # become sendable; that repair is all the pipeline may add.
            repairs = evaluation.original_errors["openai"] + evaluation.original_errors["anthropic"]
            assert ours.tokens <= evaluation.tokens_before + 40 * repairs, where
        errors = [p for ps in ours.problems.values() for p in ps if p.severity == "error"]
        assert errors == [], (where, errors)


def test_the_matched_row_runs_the_pipeline_for_its_size_but_reports_only_what_was_asked() -> None:
    session = coding_session(8)
    evaluation = evaluate(session, ("head-tail-matched",), target_ratio=0.2)
    assert list(evaluation.outcomes) == ["head-tail-matched"]
    full = evaluate(session, ("head-tail-matched", "compaction"), target_ratio=0.2)
    assert list(full.outcomes) == ["head-tail-matched", "compaction"]
    matched, ours = full.outcomes["head-tail-matched"], full.outcomes["compaction"]
    assert matched.tokens <= ours.tokens < full.tokens_before
    assert evaluation.outcomes["head-tail-matched"].tokens == matched.tokens


def test_wrong_arguments_are_named_not_blamed_on_simulate() -> None:
    with pytest.raises(TypeError, match=r"^evaluate\(\) takes a list of messages"):
        evaluate(None)
    with pytest.raises(ConfigError, match="strategies must be a comma-separated string"):
        evaluate(coding_session(), None, None)  # type: ignore[arg-type]
    with pytest.raises(ConfigError, match="config must be a CompactionConfig"):
        evaluate(coding_session(), config="rough")  # type: ignore[arg-type]
    with pytest.raises(ConfigError, match="summarizer must have a summarize"):
        evaluate(coding_session(), summarizer=1)  # type: ignore[arg-type]


def test_the_peers_are_chosen_by_name_and_measured_like_every_strategy() -> None:
    from compaction.lab.evaluate import KNOWN_STRATEGIES
    from compaction.lab.peers import PEER_NAMES

    assert set(PEER_NAMES) <= set(KNOWN_STRATEGIES)
    assert not set(PEER_NAMES) & set(STRATEGY_NAMES)  # the default set is unchanged
    assert parse_strategies("hermes, gemini-cli") == ("hermes", "gemini-cli")
    messages = coding_session(10)
    evaluation = evaluate(messages, [*PEER_NAMES, "compaction"])
    assert list(evaluation.outcomes) == [*PEER_NAMES, "compaction"]
    for name in PEER_NAMES:
        outcome = evaluation.outcomes[name]
        assert outcome.peer is not None and outcome.peer.peer == name
        assert outcome.messages == outcome.peer.messages
        assert set(outcome.problems) == {"openai", "anthropic"}
        assert outcome.to_dict()["peer"]["peer"] == name
    codex = evaluation.outcomes["codex"]
    assert all(m["role"] in ("system", "user") for m in codex.messages)
