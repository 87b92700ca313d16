"""`ClientServices`: what is advertised is exactly what is served (`--no-fs`, `--no-terminal`)."""

from __future__ import annotations

from pathlib import Path

import msgspec
import pytest

from acp_tui.protocol.jsonrpc import METHOD_NOT_FOUND, RpcError
from acp_tui.services.dispatch import ClientServices
from acp_tui.services.fs import FileSystemService
from acp_tui.services.terminals import TerminalService
from acp_tui.workspace import Workspace


@pytest.mark.parametrize(
    ("fs", "terminal", "advertised"),
    [
        (True, True, {"fs": {"readTextFile": True, "writeTextFile": True}, "terminal": True}),
        (True, False, {"fs": {"readTextFile": True, "writeTextFile": True}}),
        (False, True, {"fs": {}, "terminal": True}),
        (False, False, {"fs": {}}),
    ],
)
async def test_only_what_is_served_is_advertised(
    tmp_path: Path, fs: bool, terminal: bool, advertised: dict[str, object]
) -> None:
    workspace = Workspace([tmp_path])
    services = ClientServices(
        FileSystemService(workspace) if fs else None,
        TerminalService(workspace) if terminal else None,
    )
    assert msgspec.to_builtins(services.capabilities()) == advertised
    (tmp_path / "f.txt").write_text("x")
    read = msgspec.Raw(msgspec.json.encode({"sessionId": "s", "path": str(tmp_path / "f.txt")}))
    if fs:
        assert (await services.handle_request("fs/read_text_file", read)).content == "x"
    else:
        with pytest.raises(RpcError) as caught:
            await services.handle_request("fs/read_text_file", read)
        assert caught.value.code == METHOD_NOT_FOUND
    await services.close()


def test_which_methods_belong_to_the_services() -> None:
    assert ClientServices.serves("fs/write_text_file")
    assert ClientServices.serves("terminal/release")
    assert ClientServices.serves("fs/list_directory")  # unknown here: answered -32601
    assert not ClientServices.serves("session/request_permission")
