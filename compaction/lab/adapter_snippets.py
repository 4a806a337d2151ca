"""Settings the lab chose, as code to paste into an agent built on a framework.

The Sweep's recommendation and the Inspect page's current settings end in a `CompactionConfig`;
an agent developer who builds on LangChain, Pydantic AI or the OpenAI Agents SDK wants the one
line that puts it in their agent (`compaction.integrations`). Each snippet imports what it uses,
builds the adapter with the settings that differ from the defaults, records each compaction to
the default history (so the app's History page shows what the agent forgot), and puts the
adapter where the framework expects it; `model` and `tools` are the developer's own. A snippet
names no setting it does not change, so a later default change reaches the agent.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

#: The adapters, in the order the app shows them: key → the tab's title.
ADAPTERS: dict[str, str] = {
    "langchain": "LangChain",
    "pydantic_ai": "Pydantic AI",
    "openai_agents": "OpenAI Agents SDK",
}


def config_expression(changed: Mapping[str, Any]) -> str:
    """`CompactionConfig(...)` with the `changed` settings (name → value) as keywords."""
    arguments = ", ".join(f"{name}={value!r}" for name, value in changed.items())
    return f"CompactionConfig({arguments})"


def _options(changed: Mapping[str, Any], agent_model_summary: bool, focus: str | None) -> str:
    options = [config_expression(changed)]
    if agent_model_summary:
        options.append('summary_model="agent"')  # the agent's own model writes the summary
    if focus:
        options.append(f"focus={focus!r}")
    options.append("record_to=True")
    return ", ".join(options)


def adapter_snippets(
    changed: Mapping[str, Any], *, agent_model_summary: bool = False, focus: str | None = None
) -> dict[str, str]:
    """Ready-to-paste code for each adapter (keys of ADAPTERS): `changed` is what differs from
    the default config; `agent_model_summary` has the agent's own model write the summary (the
    lab's LLM summariser), else the extractive one does; `focus` is the summary's focus."""
    options = _options(changed, agent_model_summary, focus)
    return {
        "langchain": "\n".join(
            [
                "from langchain.agents import create_agent",
                "from compaction import CompactionConfig",
                "from compaction.integrations.langchain import CompactionMiddleware",
                "",
                f"compaction = CompactionMiddleware({options})",
                "agent = create_agent(model, tools, middleware=[compaction])",
            ]
        ),
        "pydantic_ai": "\n".join(
            [
                "from pydantic_ai import Agent",
                "from compaction import CompactionConfig",
                "from compaction.integrations.pydantic_ai import compaction_capability",
                "",
                f"compaction = compaction_capability({options})",
                "agent = Agent(model, tools=tools, capabilities=[compaction])",
            ]
        ),
        "openai_agents": "\n".join(
            [
                "from agents import Agent, RunConfig",
                "from compaction import CompactionConfig",
                "from compaction.integrations.openai_agents import CompactionFilter",
                "",
                f"compaction = CompactionFilter({options})",
                'agent = Agent(name="assistant", model=model, tools=tools)',
                "run_config = RunConfig(call_model_input_filter=compaction)",
                "# each run: await Runner.run(agent, prompt, run_config=run_config)",
            ]
        ),
    }
