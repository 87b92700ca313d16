"""The official Python SDK's example agent, advertising `loadSession: true`.

Usage: sdk_load_agent.py PATH/TO/examples/agent.py

The example agent implements `session/load` (it answers `{}`, replaying nothing) but does not
advertise it, so a client following the spec never calls it; this runs the very same agent
with the capability advertised.
"""

import asyncio
import importlib.util
import sys
from typing import Any

from acp import run_agent


def main() -> None:
    spec = importlib.util.spec_from_file_location("sdk_example_agent", sys.argv[1])
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)

    class LoadingAgent(module.ExampleAgent):  # type: ignore[name-defined,misc]
        async def initialize(self, *args: Any, **kwargs: Any) -> Any:
            response = await super().initialize(*args, **kwargs)
            response.agent_capabilities.load_session = True
            return response

    asyncio.run(run_agent(LoadingAgent()))


if __name__ == "__main__":
    main()
