"""What comes in: the checks every message list passes at the library's door (checks.py), the
two checks over tool-call ids (call_ids.py), and the same checks redone only for what changed in
a conversation an agent keeps growing (growing.py)."""
