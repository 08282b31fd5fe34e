"""What every HTTP front-end of seek shares: request checks (Host, Origin, content type,
token) and connection limits (slow and idle clients). ``seek serve``'s API uses both; the
browser UI served from the same app will sit behind the same checks."""

from seek.serving.connections import GuardedH11Protocol, quiet_server_logs, uvicorn_config
from seek.serving.guard import GuardPolicy, RequestGuard

__all__ = [
    "GuardPolicy", "GuardedH11Protocol", "RequestGuard", "quiet_server_logs", "uvicorn_config",
]  # fmt: skip
