"""Ignores `session/cancel`, the end of its input and SIGTERM alike.

On a prompt it streams one chunk and then keeps the turn open for ever; only SIGKILL ends it.
"""

import signal
import time

from _acp import Peer

signal.signal(signal.SIGTERM, signal.SIG_IGN)
signal.signal(signal.SIGHUP, signal.SIG_IGN)
peer = Peer()
peer.wait_for("session/prompt")
peer.say("Thinking very hard")
try:
    while True:
        peer.read()  # session/cancel and all: read, logged, ignored
except SystemExit:
    pass  # end of input: ignored too
while True:
    time.sleep(1)
