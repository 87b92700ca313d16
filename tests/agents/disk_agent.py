"""An ACP v1 agent that changes the workspace behind the client's back, as Codex or Claude's own
tools do: it writes files itself (no `fs/write_text_file`) and runs shell commands itself (no
`terminal/create`), each reported as a tool call.

Each line of the prompt is one step:
    write PATH TEXT     write TEXT (`\\n` for a new line) to PATH, relative to its cwd
    sh COMMAND          run COMMAND with /bin/sh in its cwd (`sh rm old.txt`)
"""

import subprocess
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent / "hostile"))

from _acp import Peer

peer = Peer()


def on_prompt(prompt: dict) -> None:
    text = "".join(b.get("text", "") for b in prompt["params"]["prompt"])
    for number, line in enumerate(text.splitlines()):
        verb, _, rest = line.partition(" ")
        call = f"step-{prompt.get('id')}-{number}"
        if verb == "write":
            path, _, content = rest.partition(" ")
            kind, title = "edit", f"Write {path}"
        elif verb == "sh":
            kind, title = "execute", rest
        else:
            continue
        peer.update(
            {
                "sessionUpdate": "tool_call",
                "toolCallId": call,
                "title": title,
                "kind": kind,
                "status": "in_progress",
            }
        )
        if verb == "write":
            target = Path(path)
            target.parent.mkdir(parents=True, exist_ok=True)
            target.write_text(content.replace("\\n", "\n"), encoding="utf-8")
        else:
            subprocess.run(["/bin/sh", "-c", rest], check=False)
        peer.update(
            {"sessionUpdate": "tool_call_update", "toolCallId": call, "status": "completed"}
        )
    peer.say("Done.")
    peer.answer(prompt, {"stopReason": "end_turn"})


peer.serve(on_prompt)
