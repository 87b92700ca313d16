"""Writes what is not ACP to stdout: a banner and an OAuth URL before it reads anything, log
lines (plain, coloured, structured JSON, blank) between the chunks of its answer.

None of it is a message; none of it gets an answer; the answer around it must arrive whole.
"""

from _acp import Peer

NOISE_BEFORE = [
    "Starting hostile-agent v1.2.3 ...",
    "To sign in, open https://auth.example.com/device?code=WXYZ-1234 in your browser",
    "",
    "   ",
]
NOISE_DURING = [
    "[INFO] loaded 3 tools",
    "\x1b[32mDEBUG\x1b[0m token stream open",
    '{"level":"info","msg":"structured log line"}',
]

peer = Peer()
for line in NOISE_BEFORE:
    peer.write_line(line)
prompt = peer.wait_for("session/prompt")
peer.say("Hello")
for line in NOISE_DURING:
    peer.write_line(line)
peer.say(", world")
peer.write_line("[INFO] turn done")
peer.answer(prompt, {"stopReason": "end_turn"})
peer.serve(lambda request: peer.answer(request, {"stopReason": "end_turn"}))
