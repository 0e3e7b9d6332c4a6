"""Which web pages may call the control plane (`/_emulator/*`) when no admin token
guards it.

Browsers send a cross-origin `POST` without asking first when it carries no custom
header (`fetch(url, {method: "POST", mode: "no-cors"})`): CORS headers alone would
let any page a developer visits reset the emulator, top up accounts or add fault
rules. So, as LocalStack does for its own endpoints, a control-plane request whose
`Origin` is not allowed is refused before it runs. Allowed: loopback origins
(`localhost`, `*.localhost`, `127.x.x.x`, `[::1]`), a page served by this server at
an IP address (its own dashboard on a LAN address), and those named with
`--control-origin`. A host name other than those needs naming: a DNS-rebinding page
is same-origin with the server under its attacker's name. The API's own routes
(bearer keys) stay open to every origin, as the real service's are.

A rebinding page's own `GET`s carry no `Origin`, so a server on loopback also
answers the control plane only under this machine's names (`Host` of localhost,
`*.localhost`, an IP address, or a named origin's host), as Vite's dev server
checks its allowed hosts. One listening on the network is open to it anyway.
"""

from __future__ import annotations

import ipaddress
from urllib.parse import urlsplit

from emulator.errors import PermissionDenied


class OriginNotAllowed(PermissionDenied):
    code = "origin_not_allowed"


def normal_origin(origin: str) -> str:
    """An origin as browsers send it (`scheme://host[:port]`, lower case), or `*` or
    `null`; ValueError for anything else (a path, a query, no scheme)."""
    text = origin.strip().lower().rstrip("/")
    if text in ("*", "null"):
        return text
    parts = urlsplit(text)
    if parts.scheme not in ("http", "https") or not parts.hostname or parts.path:
        raise ValueError(f"{origin!r} is not an origin such as http://devbox:3000")
    if parts.query or parts.fragment or parts.username or parts.password:
        raise ValueError(f"{origin!r} is not an origin such as http://devbox:3000")
    try:
        parts.port  # noqa: B018 - raises on a port out of range
    except ValueError as exc:
        raise ValueError(f"{origin!r} has no valid port") from exc
    return text


def control_refusal(
    host: str | None, origin: str | None, named: frozenset[str], check_host: bool
) -> OriginNotAllowed | None:
    """Why a control-plane request is refused, if it is: under another name than this
    machine's (`check_host`: a server on loopback), or from a page at another origin."""
    if check_host and host is not None and not host_allowed(host, named):
        return host_refusal(host)
    if origin is not None and not origin_allowed(origin, host, named):
        return refusal(origin)
    return None


def _local_name(name: str) -> bool:
    return name == "localhost" or name.endswith(".localhost")


def origin_allowed(origin: str, host: str | None, named: frozenset[str]) -> bool:
    """Whether a page at `origin` may call the control plane reached as `host`."""
    text = origin.strip().lower()
    if "*" in named or text in named:
        return True
    try:
        parts = urlsplit(text)
        hostname = parts.hostname
    except ValueError:
        return False
    if not hostname or parts.scheme not in ("http", "https"):
        return False  # `null` (a file, a sandboxed frame) unless named
    if _local_name(hostname):
        return True
    try:
        address = ipaddress.ip_address(hostname)
    except ValueError:
        return False  # a name: only when named
    # A page at an IP address is on this server when it reached the same address.
    return address.is_loopback or (host is not None and parts.netloc == host.lower())


def is_loopback_host(host: str) -> bool:
    """Whether `--host` listens on this machine alone."""
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host.strip("[]")).is_loopback
    except ValueError:
        return False  # a name: it may resolve to any interface


def host_allowed(host: str, named: frozenset[str]) -> bool:
    """Whether a request that reached us as `Host: host` may call the control plane."""
    text = host.strip().lower()
    name = text.rsplit(":", 1)[0] if text.count(":") == 1 else text
    name = name.split("]")[0].lstrip("[") if name.startswith("[") else name
    if _local_name(name) or "*" in named:
        return True
    try:
        ipaddress.ip_address(name)
        return True  # an address is not a name an attacker's DNS can point at us
    except ValueError:
        pass
    return any(urlsplit(origin).hostname == name for origin in named if origin != "null")


def host_refusal(host: str) -> OriginNotAllowed:
    return OriginNotAllowed(
        f"The control plane does not answer requests for the host {host!r}: listening "
        "on loopback without an admin token, it answers only under localhost or an IP "
        "address (a web page can point a name of its own at 127.0.0.1). Call it at "
        "http://127.0.0.1:<port>, or start the emulator with --control-origin "
        f"http://{host} or --admin-token."
    )


def refusal(origin: str) -> OriginNotAllowed:
    return OriginNotAllowed(
        f"The control plane does not answer web pages from {origin}: without an admin "
        "token, only pages on localhost (or an IP address of this server) may call "
        f"/_emulator/*. Start the emulator with --control-origin {origin} to allow this "
        "page, or with --admin-token to guard the control plane with a token instead."
    )
