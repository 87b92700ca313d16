"""The ACP Registry (https://agentclientprotocol.com): the official list of ACP agents and how
to install and start each. Reading the index (`source`, `index`) and installing and starting
its agents (`install`); no Textual here, so any front end can use it."""

from acp_tui.registry.index import BinaryTarget, PackageDistribution, RegistryAgent, RegistryIndex
from acp_tui.registry.install import InstallError, LaunchPlan, install_binary, plan_launch
from acp_tui.registry.source import LoadedRegistry, load_registry, load_registry_async

__all__ = [
    "BinaryTarget",
    "InstallError",
    "LaunchPlan",
    "LoadedRegistry",
    "PackageDistribution",
    "RegistryAgent",
    "RegistryIndex",
    "install_binary",
    "load_registry",
    "load_registry_async",
    "plan_launch",
]
