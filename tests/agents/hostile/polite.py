"""Behaves: answers each prompt with one message and `end_turn`. The baseline the faults of
acp-tui's own side (an unwritable transcript, a resized terminal) are tested against."""

from _acp import Peer

peer = Peer()


def on_prompt(request: dict) -> None:
    peer.say("Hello from a polite agent")
    peer.answer(request, {"stopReason": "end_turn"})


peer.serve(on_prompt)
