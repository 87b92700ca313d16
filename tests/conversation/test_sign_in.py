"""Signing in, against an agent that requires it (`tests/agents/auth_agent.py`)."""

from __future__ import annotations

import asyncio
import os
import subprocess
import sys
from pathlib import Path

import pytest

from acp_tui.conversation.opening import open_conversation
from acp_tui.conversation.sign_in import (
    AuthChoice,
    AuthFailed,
    AuthRequired,
    auth_choices,
    run_in_terminal,
    terminal_login,
    with_sign_in,
)
from acp_tui.protocol import methods as m
from acp_tui.protocol.content import text_block
from acp_tui.records import RecordStore
from acp_tui.session.agent_info import AgentInfo
from acp_tui.session.client import AgentClient
from acp_tui.session.options import ClientOptions
from acp_tui.session.session import PendingPermission
from tests.support import TEST_AGENTS

AUTH_AGENT = [sys.executable, str(TEST_AGENTS / "auth_agent.py")]
ACP_TUI = [sys.executable, "-m", "acp_tui"]


def env(tmp_path: Path, **extra: str) -> dict[str, str]:
    base = {k: v for k, v in os.environ.items() if k != "AUTH_AGENT_KEY"}
    return {
        **base,
        "XDG_CONFIG_HOME": str(tmp_path / "config"),
        "XDG_DATA_HOME": str(tmp_path / "data"),
        "AUTH_AGENT_HOME": str(tmp_path),
        **extra,
    }


def headless(tmp_path: Path, *args: str, **extra: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [*ACP_TUI, "--cwd", str(tmp_path), *args, "--", *AUTH_AGENT],
        capture_output=True,
        text=True,
        env=env(tmp_path, **extra),
        stdin=subprocess.DEVNULL,
        timeout=60,
    )


def calls(tmp_path: Path) -> list[str]:
    return (tmp_path / "calls.log").read_text().splitlines()


def test_headless_lists_the_methods_then_signs_in_and_remembers(tmp_path: Path) -> None:
    refused = headless(tmp_path, "-p", "hi")
    assert refused.returncode == 1
    # No terminal to log in with (stdin is not one): the agent does not offer that method.
    assert refused.stderr == (
        "acp-tui: the agent requires sign-in; pass --auth with one of: "
        "token (agent), api-key (env var)\n"
    )
    signed = headless(tmp_path, "--auth", "token", "-p", "hi")
    assert (signed.returncode, signed.stdout) == (0, "signed in: hi\n"), signed.stderr
    (tmp_path / "calls.log").unlink()
    # Next time the remembered method signs in when the agent asks for it.
    again = headless(tmp_path, "-p", "again")
    assert (again.returncode, again.stdout) == (0, "signed in: again\n"), again.stderr
    assert calls(tmp_path) == [
        "initialize null",
        "session/new null",
        'authenticate "token"',
        "session/new null",
        "session/prompt null",
    ]


def test_headless_reports_a_method_that_cannot_work(tmp_path: Path) -> None:
    unknown = headless(tmp_path, "--auth", "nope", "-p", "hi")
    assert unknown.returncode == 1
    assert unknown.stderr == (
        "acp-tui: the agent has no sign-in method 'nope'; it offers: token, api-key\n"
    )
    no_key = headless(tmp_path, "--auth", "api-key", "-p", "hi")
    assert no_key.returncode == 1
    assert no_key.stderr == (
        "acp-tui: API key needs AUTH_AGENT_KEY (your key); get them at https://example.com/keys\n"
    )
    with_key = headless(tmp_path, "--auth", "api-key", "-p", "hi", AUTH_AGENT_KEY="secret")
    assert (with_key.returncode, with_key.stdout) == (0, "signed in: hi\n"), with_key.stderr


def test_auth_choices_are_read_leniently() -> None:
    info = AgentInfo(
        auth_methods=[
            m.AuthMethod(name="A", id="a", description="by the agent"),
            m.AuthMethod(
                name="T",
                method_id="t",
                type="terminal",
                args=["login", 3],
                env=[{"name": "X", "value": "1"}, {"name": "bad"}],
            ),
            m.AuthMethod(name="E", id="e", type="env_var", vars=[{"name": "K"}, "junk"]),
            m.AuthMethod(
                name="Legacy",
                id="l",
                meta={"terminal-auth": {"command": "claude", "args": ["/login"], "label": "x"}},
            ),
        ]
    )
    a, t, e, legacy = auth_choices(info)
    assert a.describe() == "A (agent): by the agent"
    assert (t.type, t.args, dict(t.env)) == ("terminal", ("login",), {"X": "1"})
    assert e.type_label == "env var" and [v.name for v in e.vars] == ["K"]
    assert e.missing({}) and not e.with_values({"K": "v"}).missing({})
    assert (legacy.type, legacy.command, legacy.args) == ("terminal", ("claude",), ("/login",))
    assert terminal_login(["agent", "--acp"], t) == (["agent", "--acp", "login"], {"X": "1"})
    assert terminal_login(["agent"], legacy) == (["claude", "/login"], {})


async def refuse(pending: PendingPermission) -> None:
    pending.cancel()


def client(tmp_path: Path, *, terminal_auth: bool = True) -> AgentClient:
    options = ClientOptions(cwd=tmp_path, terminal_auth=terminal_auth)
    return AgentClient(list(AUTH_AGENT), options, decide_permission=refuse)


async def test_terminal_sign_in_runs_the_login_and_reconnects(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("AUTH_AGENT_HOME", str(tmp_path))
    store = RecordStore.open(tmp_path / "records.sqlite3")
    assert store is not None
    agent = client(tmp_path)
    await agent.start()
    offered: list[tuple[list[str], str | None]] = []
    ran: list[list[str]] = []

    async def choose(choices: list[AuthChoice], remembered: str | None) -> AuthChoice | None:
        offered.append(([c.id for c in choices], remembered))
        return next(c for c in choices if c.type == "terminal")

    async def run_terminal(argv: list[str], extra: dict[str, str]) -> int:
        ran.append(argv)
        return await asyncio.to_thread(run_in_terminal, argv, extra, tmp_path)

    try:
        opened = await with_sign_in(
            agent,
            lambda: open_conversation(agent, store, "auth", session_id=None),
            agent="auth",
            store=store,
            choose=choose,
            run_terminal=run_terminal,
        )
        assert opened.how == "new"
        assert await opened.session.prompt([text_block("yo")]) == "end_turn"
        assert opened.session.state.timeline[-1].text == "signed in: yo"
    finally:
        await agent.close()
    assert offered == [(["token", "login", "api-key"], None)]
    assert ran == [[*AUTH_AGENT, "--login"]]
    assert (tmp_path / "logged-in").exists()
    assert store.remembered_auth("auth") == "login"


async def test_a_failed_terminal_login_and_giving_up(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("AUTH_AGENT_HOME", str(tmp_path))
    agent = client(tmp_path)
    await agent.start()

    async def choose_login(choices: list[AuthChoice], remembered: str | None) -> AuthChoice:
        return next(c for c in choices if c.id == "login")

    async def fail(argv: list[str], extra: dict[str, str]) -> int:
        return 1

    async def give_up(choices: list[AuthChoice], remembered: str | None) -> None:
        return None

    try:
        with pytest.raises(AuthFailed, match=r"--login exited with status 1"):
            await with_sign_in(
                agent, agent.new_session, agent="auth", choose=choose_login, run_terminal=fail
            )
        assert agent.process is not None and agent.process.returncode is None  # restarted
        with pytest.raises(AuthRequired) as raised:
            await with_sign_in(agent, agent.new_session, agent="auth", choose=give_up)
        assert [c.id for c in raised.value.choices] == ["token", "login", "api-key"]
        session = await with_sign_in(agent, agent.new_session, agent="auth", method="token")
        assert session.id.startswith("auth-")
    finally:
        await agent.close()


def test_logout_from_the_command_line_signs_out_and_forgets_the_method(tmp_path: Path) -> None:
    (tmp_path / "logged-in").write_text("yes")  # signed in by an earlier terminal login
    assert headless(tmp_path, "--auth", "token", "-p", "hi").returncode == 0
    logout = subprocess.run(
        [*ACP_TUI, "logout", "--cwd", str(tmp_path), "--", *AUTH_AGENT],
        env=env(tmp_path),
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert (logout.returncode, logout.stdout) == (0, "Signed out of auth-agent 1.0.\n")
    assert calls(tmp_path)[-1] == "logout null"
    assert not (tmp_path / "logged-in").exists()
    # The remembered method is forgotten: the next run asks again, it does not sign back in.
    refused = headless(tmp_path, "-p", "hi")
    assert refused.returncode == 1 and "requires sign-in" in refused.stderr


def test_logout_of_an_agent_that_does_not_offer_it(tmp_path: Path) -> None:
    logout = subprocess.run(
        [*ACP_TUI, "logout", "--cwd", str(tmp_path)],
        env={**env(tmp_path), "ACP_TUI_DEMO_SPEED": "0"},
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert logout.returncode == 1
    assert logout.stderr == (
        "acp-tui: acp-tui demo agent 0.1.0 does not offer sign-out "
        "(no `agentCapabilities.auth.logout`)\n"
    )
