"""Reads cargo's --message-format=json on stdin; copies every built executable into argv[1]."""
import json
import os
import shutil
import sys

dest = sys.argv[1]
for line in sys.stdin:
    try:
        m = json.loads(line)
    except ValueError:
        continue
    exe = m.get("executable") if m.get("reason") == "compiler-artifact" else None
    if exe:
        name = m["target"]["name"]
        shutil.copy2(exe, os.path.join(dest, name))
        print(f"  {dest}/{name}  ({os.path.getsize(exe) // 1024} KiB)")
