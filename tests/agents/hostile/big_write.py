"""Asks the client to write a file of argv[1] megabytes (`big.txt` in the session's cwd) in
one `fs/write_text_file` line, streamed out in pieces (the agent never holds it whole); with
argv[2] `id-last`, the request's id comes after its params. Says what came back, and ends the
turn; a second prompt gets a short answer (the connection still works)."""

import json
import os
import sys

from _acp import SESSION_ID, Peer

MEGABYTES = float(sys.argv[1])
ID_LAST = sys.argv[2:] == ["id-last"]
LINE = "a line of the big file, written by the agent\\n"  # a JSON-escaped newline
PIECE = LINE * 20_000

peer = Peer()
new = peer.wait_for("session/new")
path = os.path.join(new["params"]["cwd"], "big.txt")
peer.serve_setup(new)
prompt = peer.wait_for("session/prompt")
params = '"params":{"sessionId":"' + SESSION_ID + '","path":' + json.dumps(path)
head = '{"jsonrpc":"2.0",' + ("" if ID_LAST else '"id":7,') + '"method":"fs/write_text_file",'
out = sys.stdout.buffer
out.write((head + params + ',"content":"').encode())
left = int(MEGABYTES * 1024 * 1024) // len(LINE) * len(LINE)  # whole lines: whole escapes
while left > 0:
    piece = PIECE[:left]
    out.write(piece.encode())
    left -= len(piece)
out.write(('"}' + (',"id":7' if ID_LAST else "") + "}\n").encode())
out.flush()
answer = peer.wait_for_answer(7, timeout=120)
if answer is None:
    said = "no answer"
elif "error" in answer:
    said = f"error {answer['error']['code']}: {answer['error']['message']}"
else:
    said = "written"
peer.say(said)
peer.answer(prompt, {"stopReason": "end_turn"})


def answer(request: dict) -> None:
    peer.say("still here")
    peer.answer(request, {"stopReason": "end_turn"})


peer.serve(answer)
