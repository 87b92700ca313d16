"""Permission requests that make no sense (`tests/agents/hostile/odd_permissions.py`, a real
process): an ambiguous one is refused as invalid, one about nothing is never allowed by a
standing answer, one with no option is answered `cancelled` without ending the turn."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.headless.test_faults import headless


@pytest.mark.parametrize("permission", ["allow", "reject"])
async def test_options_that_repeat_an_id_are_invalid_params(
    tmp_path: Path, permission: str
) -> None:
    """Under reject, acp-tui once answered `ok`, which was also the allow option's id."""
    run = await headless(tmp_path, "odd-permissions", "--permission", permission,
                         prompts=["dupes"])  # fmt: skip
    assert run.status == 0, run.err
    assert run.out == "dupes: error -32602 Invalid params: the options repeat the optionId ok\n"


async def test_a_request_about_no_tool_call_is_not_allowed_by_the_mode(tmp_path: Path) -> None:
    run = await headless(tmp_path, "odd-permissions", "--permission", "allow",
                         prompts=["no-call"])  # fmt: skip
    assert run.out == "no-call: no\n"  # asked; headless has no one to ask: rejected
    assert (
        "permission for a request about no tool call: no (--permission allow (allow_once), "
        "but the request names no tool call: the user decides; no one to ask" in run.err
    )


async def test_a_rule_does_not_allow_it_either(tmp_path: Path) -> None:
    rules = tmp_path / "config" / "acp-tui" / "permissions.toml"
    rules.parent.mkdir(parents=True)
    rules.write_text('[[rule]]\nkind = "*"\ndecision = "allow"\n')
    run = await headless(tmp_path, "odd-permissions", prompts=["no-call dupes"])
    assert run.out.splitlines()[0] == "no-call: no"


async def test_no_option_is_answered_cancelled_and_the_turn_goes_on(tmp_path: Path) -> None:
    run = await headless(tmp_path, "odd-permissions", "--permission", "allow",
                         prompts=["no-options", "no-options"])  # fmt: skip
    assert run.status == 0, run.err
    assert run.out == "no-options: cancelled\nno-options: cancelled\n"
