"""What a shell command or a patch body does to each file it names (extractive/shell_files.py)."""

from __future__ import annotations

import pytest

from compaction.summarizers.extractive.shell_files import command_effects, patch_effects


@pytest.mark.parametrize(
    ("command", "effects"),
    [
        ("sed -i 's/a/b/' src/a.py", [("src/a.py", "edited (sed -i)")]),
        ("sed -i '' -e 's/x/y/g' src/lib.rs", [("src/lib.rs", "edited (sed -i)")]),
        ("cat > f.py <<'EOF'\nprint(1) > not_a_file.txt\nEOF", [("f.py", "written")]),
        ("cat <<EOF > notes.md", [("notes.md", "written")]),
        ("echo done >> log.txt", [("log.txt", "appended")]),
        ("mv a.py b/c.py", [("a.py", "moved to b/c.py"), ("b/c.py", "moved from a.py")]),
        ("cp a.py a.bak.py", [("a.py", "copied to a.bak.py"), ("a.bak.py", "copied from a.py")]),
        (
            "git add src/x.py README.md",
            [("src/x.py", "staged (git add)"), ("README.md", "staged (git add)")],
        ),
        ("git rm old/y.py", [("old/y.py", "deleted (git rm)")]),
        ("rm -rf build/ dist/out.whl", [("build/", "deleted"), ("dist/out.whl", "deleted")]),
        ("touch src/__init__.py", [("src/__init__.py", "created")]),
        ("/usr/bin/time -v pytest tests/test_a.py 2>&1 | tail -5", [("tests/test_a.py", "tested")]),
        ("cd /repo && python3 scripts/run.py", [("scripts/run.py", "ran")]),
        ("FOO=1 cat config/app.yaml | grep port", [("config/app.yaml", "read")]),
        ("git push origin main", []),
        (
            "ls C:\\Users\\me\\proj\\file.txt",
            [("C:\\Users\\me\\proj\\file.txt", "used in a command")],
        ),
    ],
)
def test_command_effects(command: str, effects: list[tuple[str, str]]) -> None:
    assert command_effects(command) == effects


def test_unbalanced_quotes_fall_back_to_words() -> None:
    assert command_effects("sed -i 's/a/b src/a.py") == [("src/a.py", "edited (sed -i)")]


def test_patch_bodies_in_commands_and_arguments() -> None:
    patch = (
        "*** Begin Patch\n*** Add File: a/new.py\n+x\n*** Update File: a/old.py\n"
        "*** Move to: a/renamed.py\n*** Delete File: a/gone.py\n*** End Patch"
    )
    expected = [
        ("a/new.py", "created"),
        ("a/old.py", "edited"),
        ("a/renamed.py", "created (moved)"),
        ("a/gone.py", "deleted"),
    ]
    assert patch_effects(patch) == expected
    assert command_effects(f"apply_patch <<'PATCH'\n{patch}\nPATCH") == expected
