"""`acp-tui serve --listen HOST:PORT [--token-file F] -- AGENT ...`: a local agent for remote
clients, at `/acp` (`acp_tui.remote.serve`).

Exit status: 0 stopped by SIGINT or SIGTERM (every agent stopped first); 1 it cannot listen
(the port taken); 2 a usage error: no agent, a bad `--listen`, no token beyond loopback, a
token file that cannot be read.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import os
import ssl
import sys
from pathlib import Path

from acp_tui.cli.printing import config
from acp_tui.cli.workspace import workspace_for
from acp_tui.config import ConfigError
from acp_tui.remote.serve import ServeError, bind, is_loopback, run_server
from acp_tui.remote.serve_endpoint import ServeOptions

TOKEN_VARIABLE = "ACP_TUI_TOKEN"
"""The environment variable the token is taken from without `--token-file` (never from the
command line, where `ps` shows it to everyone on the machine)."""


class _Usage(Exception):
    pass


def run(args: argparse.Namespace, agent_command: list[str]) -> int:
    try:
        host, port = _listen(args.listen)
        token = _token(args.token_file)
        if token is None and not is_loopback(host):
            raise _Usage(
                f"listening on {host}, beyond this machine, needs a bearer token: give "
                f"--token-file FILE or set {TOKEN_VARIABLE} (or listen on 127.0.0.1 and reach "
                "it through an ssh tunnel)"
            )
        agent = config().agent(args.agent, agent_command)
        options = ServeOptions(
            argv=agent.command,
            cwd=workspace_for(agent, args.cwd),
            env=dict(agent.env),
            token=token,
            grace=args.grace,
            max_message=int(args.max_message * 2**20),
        )
        tls = _tls(args.certfile, args.keyfile)
        sock = bind(host, port)
    except (_Usage, ConfigError) as error:
        print(f"acp-tui serve: {error}", file=sys.stderr)
        return 2
    except ServeError as error:
        print(f"acp-tui serve: {error}", file=sys.stderr)
        return 1
    where = sock.getsockname()
    shown = f"[{where[0]}]" if ":" in where[0] else where[0]
    http, ws = ("https", "wss") if tls else ("http", "ws")
    _log(
        f"serving {' '.join(options.argv)} at {http}://{shown}:{where[1]}/acp "
        f"({ws}://{shown}:{where[1]}/acp), one agent a connection, in {options.cwd}; "
        f"{'a bearer token needed' if token else 'no token: loopback only'}"
    )
    asyncio.run(run_server(options, sock, _log, tls))
    return 0


def _log(line: str) -> None:
    with contextlib.suppress(OSError):  # stderr gone (a closed pipe): the server serves on
        print(f"acp-tui serve: {line}", file=sys.stderr, flush=True)


def _listen(text: str) -> tuple[str, int]:
    host, sep, port = text.rpartition(":")
    if not sep or not host or not port.isdigit() or int(port) > 65535:
        raise _Usage(f"--listen {text!r}: give HOST:PORT (127.0.0.1:8765, [::1]:8765)")
    return host.strip("[]"), int(port)


def _tls(certfile: Path | None, keyfile: Path | None) -> tuple[Path, Path] | None:
    """The certificate and key to serve TLS with, checked before the server starts."""
    if certfile is None and keyfile is None:
        return None
    if certfile is None or keyfile is None:
        raise _Usage("TLS needs both --certfile and --keyfile")
    try:
        ssl.create_default_context(ssl.Purpose.CLIENT_AUTH).load_cert_chain(certfile, keyfile)
    except (OSError, ssl.SSLError) as error:
        raise _Usage(f"cannot serve TLS with {certfile} and {keyfile}: {error}") from None
    return certfile, keyfile


def _token(token_file: Path | None) -> str | None:
    """The token: the file's first line, else the environment's; None when neither has one."""
    if token_file is None:
        return os.environ.get(TOKEN_VARIABLE, "").strip() or None
    try:
        text = token_file.read_text(encoding="utf-8").strip()
    except (OSError, UnicodeDecodeError) as error:
        raise _Usage(f"cannot read the token file {token_file}: {error}") from None
    if not text:
        raise _Usage(f"the token file {token_file} is empty")
    return text.splitlines()[0].strip()
