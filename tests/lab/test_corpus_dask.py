"""The corpus engine on a Dask `LocalCluster` on this machine: the same task functions, results
streamed back into the history, and a failed task recorded with its error, never stopping the
rest. Threads, not processes (`processes=False`), so the test is quick and steady on a 2-core CI
machine; the benchmark (benchmarks/bench_corpus.py) runs a 2-process cluster."""

from __future__ import annotations

import shutil
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from corpus_paths import corpus_path

from compaction.errors import ConfigError
from compaction.history import History
from compaction.lab.corpus.runner import run_each
from compaction.lab.corpus.scanning import scan_corpus
from compaction.lab.corpus.sources import sources_under

distributed = pytest.importorskip("distributed")

pytestmark = pytest.mark.timeout(180)


@pytest.fixture(scope="module")
def scheduler() -> Iterator[str]:
    cluster = distributed.LocalCluster(
        n_workers=2, threads_per_worker=1, processes=False, dashboard_address=None
    )
    try:
        yield str(cluster.scheduler_address)
    finally:
        cluster.close()


def _fails_on_three(number: int) -> int:
    if number == 3:
        raise ValueError("session 3 is broken")
    return number * 10


def test_a_failed_task_is_recorded_and_the_others_finish(scheduler: str) -> None:
    seen: list[Any] = []
    outcome = run_each(
        _fails_on_three,
        list(range(6)),
        scheduler=scheduler,
        on_result=seen.append,
        on_error=lambda item, exc: f"{item}: {exc}",
    )
    assert outcome.results == [0, 10, 20, "3: ValueError: session 3 is broken", 40, 50]
    assert sorted(map(str, seen)) == sorted(map(str, outcome.results))  # streamed, one by one
    assert outcome.where == f"Dask at {scheduler}" and not outcome.stopped


def test_a_scan_on_the_cluster_equals_the_local_one_and_is_stored(
    scheduler: str, tmp_path: Path
) -> None:
    folder = tmp_path / "sessions"
    folder.mkdir()
    for name in (
        "claudecode-spotter__258c7280-ae70-4798-800f-63464d01a85d.jsonl",
        "claudecode-yatra__claude-session.jsonl",
        "codex-empireofbits__codex-session.jsonl",
    ):
        source = corpus_path(name)
        if source is None:
            pytest.skip("the shared corpus (../shared/corpus) is not beside the project")
        shutil.copy(source, folder / name)
    (folder / "broken.jsonl").write_bytes(b"\x00\x01 corrupt")
    local = scan_corpus(sources_under([folder]))
    with History() as history:
        remote = scan_corpus(sources_under([folder]), store=history, scheduler=scheduler)
        stored = history.previous_scans(f.path for f in remote.files)

    def strip(rows: list[dict[str, Any]]) -> list[dict[str, Any]]:
        return [{k: v for k, v in row.items() if k != "duration_s"} for row in rows]

    assert strip([f.to_dict() for f in remote.files]) == strip([f.to_dict() for f in local.files])
    assert len(stored) == 4 and sum(len(f.compactions) for f in remote.files) == 1
    assert any(f.error and "binary" in f.error for f in remote.files)


def test_an_unreachable_scheduler_is_an_error_the_user_can_act_on(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr("compaction.lab.corpus.runner.CONNECT_TIMEOUT_S", 2)
    with pytest.raises(ConfigError, match="cannot reach the Dask scheduler"):
        run_each(str, [1], scheduler="tcp://127.0.0.1:9", on_error=lambda i, e: "")
