"""What a seek server is started with: the workspaces it may name, its token, extra Host
names and browser origins (``seek serve``, ``seek ui``, ``seek corpus serve``)."""

from __future__ import annotations

import ipaddress
from dataclasses import dataclass
from pathlib import Path


def is_loopback(host: str) -> bool:
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


@dataclass
class ServeConfig:
    workspaces: tuple[Path, ...]
    token: str = ""
    overrides: dict[str, object] | None = None
    hosts: tuple[str, ...] = ()
    """Extra ``Host`` names (the ``serve_hosts`` setting)."""
    origins: tuple[str, ...] = ()
    """Browser origins allowed to call (the ``serve_origins`` setting)."""
    ui: bool = False
    """Also serve the browser page (``seek ui``, :mod:`seek.web.ui`)."""
