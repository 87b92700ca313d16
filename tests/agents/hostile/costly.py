"""Spends: on each prompt it streams words, reporting after each a `usage_update` whose cost
grows by argv[1] dollars and whose context fills by argv[2] percent of a 100,000-token window
(no cost at all when argv[1] is `none`), until the turn is cancelled; it then ends the turn
`cancelled`, as the spec asks. A prompt saying `short` gets one word and `end_turn`."""

import sys

from _acp import Peer

STEP_COST = None if sys.argv[1] == "none" else float(sys.argv[1])
STEP_CONTEXT = float(sys.argv[2])
WINDOW = 100_000

peer = Peer()
spent = 0.0
used = 0.0


def on_prompt(prompt: dict) -> None:
    global spent, used
    text = "".join(block.get("text", "") for block in prompt["params"]["prompt"])
    cancelled = False
    for step in range(1 if "short" in text else 10_000):
        peer.say(f"word{step} ")
        spent += STEP_COST or 0
        used += STEP_CONTEXT * WINDOW / 100
        usage = {"sessionUpdate": "usage_update", "used": int(used), "size": WINDOW}
        if STEP_COST is not None:
            usage["cost"] = {"amount": round(spent, 6), "currency": "USD"}
        peer.update(usage)
        incoming = peer.read(timeout=0.01)
        if incoming is not None and incoming.get("method") == "session/cancel":
            cancelled = True
            break
    peer.answer(prompt, {"stopReason": "cancelled" if cancelled else "end_turn"})


peer.serve(on_prompt)
