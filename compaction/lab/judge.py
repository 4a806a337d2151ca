"""The judged probe run: can a model, reading only a compacted context, answer what it must?

Substring recall (probes.py) says whether a fact is still written somewhere; a judged
run asks whether a model can actually use it. For each strategy of an Evaluation, the model gets
the compacted context as a transcript and four questions — recall (exact errors and
identifiers), artifacts (files changed, commands run), continuation (the latest request) and
decisions (the user's constraints) — and each answer is graded against the facts mined from the
ORIGINAL conversation: a fact counts when the answer quotes it, or shares most of its words.

The context is sent as text inside one user message rather than as a message list: a strategy
whose output a provider rejects (head-tail cuts tool groups) must still be judged on its content.
The prompt is redacted before it leaves the machine; litellm is imported lazily with the bundled
cost map; `num_retries=0` so one question is one request. A failed call is recorded on that
strategy (the others still run) rather than raised.
"""

from __future__ import annotations

import re
import time
from typing import Any

from compaction.lab.evaluate import Evaluation
from compaction.lab.judgement import QUESTIONS, JudgedStrategy, Judgement
from compaction.lab.probes import Fact, normalise
from compaction.litellm_loader import load_litellm
from compaction.phases.summary_prompt import serialize_turns
from compaction.summarizers.llm_errors import error_message
from compaction.text.redact import redact

HEADINGS = {
    "recall": "Recall",
    "artifacts": "Artifacts",
    "continuation": "Continuation",
    "decisions": "Decisions",
}
SYSTEM_PROMPT = (
    "You answer questions about an AI agent's context window, using only the transcript given. "
    "If the transcript does not say, answer 'unknown'. Answer under exactly these markdown "
    "headings: " + ", ".join(f"## {name}" for name in HEADINGS.values()) + "."
)
OVERLAP_NEEDED = 0.6  # share of a fact's words an answer must contain to count as a paraphrase
_WORD = re.compile(r"[a-z0-9_]{3,}")
_HEADING = re.compile(
    r"^\s*#{1,6}\s*\**\s*(recall|artifacts|continuation|decisions)\b", re.I | re.M
)


def build_prompt(messages: list[dict[str, Any]]) -> list[dict[str, str]]:
    """The judge's request: the context as a transcript, then the four questions (redacted)."""
    questions = "\n\n".join(f"## {HEADINGS[name]}\n{text}" for name, (text, _) in QUESTIONS.items())
    user = (
        "TRANSCRIPT OF THE AGENT'S CONTEXT:\n\n"
        + serialize_turns(messages)
        + "\n\nQUESTIONS (answer each under its heading):\n\n"
        + questions
    )
    return [
        {"role": "system", "content": SYSTEM_PROMPT},
        {"role": "user", "content": redact(user)},
    ]


def split_answer(text: str) -> dict[str, str]:
    """The answer to each question, by heading; an answer without headings answers them all."""
    marks = list(_HEADING.finditer(text))
    if not marks:
        return dict.fromkeys(QUESTIONS, text)
    answers = dict.fromkeys(QUESTIONS, "")
    for position, mark in enumerate(marks):
        end = marks[position + 1].start() if position + 1 < len(marks) else len(text)
        body = text[mark.end() : end].strip()
        key = mark.group(1).lower()
        answers[key] = f"{answers[key]}\n{body}".strip()
    return answers


def fact_answered(fact: Fact, answer: str) -> bool:
    """Quoted (normalised substring), or most of the fact's words present in the answer."""
    normalised = normalise(answer)
    if fact.key in normalised:
        return True
    words = set(_WORD.findall(fact.key))
    if not words:
        return False
    present = set(_WORD.findall(normalised))
    return len(words & present) / len(words) >= OVERLAP_NEEDED


def grade(facts: list[Fact], answers: dict[str, str], judged: JudgedStrategy) -> None:
    """Fill `judged`'s scores, found and missed lists from `answers`."""
    for question, (_, categories) in QUESTIONS.items():
        expected = [fact for fact in facts if fact.category in categories]
        answer = answers.get(question, "")
        found = [fact.text for fact in expected if fact_answered(fact, answer)]
        judged.found[question] = found
        judged.missed[question] = [fact.text for fact in expected if fact.text not in found]
        judged.scores[question] = len(found) / len(expected) if expected else None


def judge(
    evaluation: Evaluation,
    model: str,
    api_base: str | None = None,
    api_key: str | None = None,
    timeout: float = 120,
) -> Judgement:
    """Ask `model` the four questions about each strategy's context; grade; attach and return."""
    litellm = load_litellm()
    results: dict[str, JudgedStrategy] = {}
    for name, outcome in evaluation.outcomes.items():
        judged = JudgedStrategy(name)
        began = time.perf_counter()
        try:
            response = litellm.completion(
                model=model,
                messages=build_prompt(outcome.messages),
                api_base=api_base,
                api_key=api_key,
                timeout=timeout,
                num_retries=0,
            )
            text = response.choices[0].message.content or ""
        except Exception as exc:  # any provider failure is this strategy's result, not a crash
            judged.error = error_message(exc)
            text = ""
        judged.duration_s = time.perf_counter() - began
        judged.answers = split_answer(text)
        if judged.error is None:
            grade(evaluation.facts, judged.answers, judged)
        results[name] = judged
    judgement = Judgement(model=model, strategies=results)
    evaluation.judgement = judgement
    return judgement
