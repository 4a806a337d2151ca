"""The per-phase change list: what each phase itself did, not what earlier phases did."""

from __future__ import annotations

from compaction.compactor import Compactor
from compaction.config import CompactionConfig
from compaction.lab.samples import load_sample
from compaction.ui.phase_diff import phase_changes


def test_later_phases_do_not_list_the_summary_phase_4_inserted() -> None:
    messages = load_sample("orphans").messages
    result = Compactor(CompactionConfig()).compress(messages, force=True)
    phases = {phase.name: phase for phase in result.phases}
    assemble, cleanup = phases["assemble"], phases["cleanup"]
    inserted_by_assemble = [
        c
        for c in phase_changes(phases["summarize"].messages, phases["summarize"].origins, assemble)
        if c.kind == "inserted"
    ]
    assert len(inserted_by_assemble) == 1  # the summary
    summary = inserted_by_assemble[0].after
    changes = phase_changes(assemble.messages, assemble.origins, cleanup)
    assert all(change.after is not summary for change in changes)
    # What Phase 5 did is exactly its orphan fixes: the stubs it inserted, the results it took out.
    stubs = [f for f in result.orphan_fixes if f.kind == "inserted_stub"]
    inserted = [c for c in changes if c.kind == "inserted"]
    assert len(inserted) == len(stubs) > 0
    assert all("Result from earlier conversation" in str(c.after["content"]) for c in inserted)
