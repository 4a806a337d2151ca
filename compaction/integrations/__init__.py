"""Drop-in compaction for agent frameworks: LangChain 1.x / LangGraph (an agent middleware),
Pydantic AI (a history processor and capability) and the OpenAI Agents SDK (a model-input filter).

Each adapter is a module of its own behind its own extra (`compaction-lab[langchain]`,
`[pydantic-ai]`, `[openai-agents]`), imported only when named: importing this package loads no
framework. What they share is here beside them: `view` (one conversation's compacted view, one
Compactor per conversation, the framework's objects back for every message compaction kept),
`recording` (each compaction into the run history, so the app opens it), `summarizing` (the
summary written by the framework's own model).

The package is outside the engine: it may record to the history (`[app]`), lazily. The engine's
own telemetry (one OpenTelemetry span per compaction) is `compaction.telemetry`.
"""
