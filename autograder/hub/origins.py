"""Where users open the hub, and each user's server on an origin of its own.

A browser keeps each origin (scheme, host, port) apart: a script may read and send anything
that pages of its own origin can, and nothing of another's. On one origin
(``http://127.0.0.1:8000/user/<name>/``), any page a student's server serves (the server is
hers: its configuration, extensions and notebooks' outputs) runs, in the browser of whoever
opens it, as that person: one listed Carol's files, typed into the instructor's terminals and
made an admin token for the hub's API (``tests/pipeline/test_hub_across_origins.py``). JupyterHub's
``subdomain_host`` serves the hub from ``<host>`` and each user's server from
``<user>.<host>``: the proxy routes by host name (JupyterHub turns on configurable-http-proxy's
host routing), each login cookie stays on its own host, each server's OAuth round trip comes
back to its own host, and a page of one user's origin can neither read another's nor send it
a request it accepts (Jupyter's APIs refuse a foreign ``Origin`` and check signed XSRF tokens).

``MINITORCH_HUB_URL`` is the address users open, ``http(s)://localhost:<port>`` by default:
browsers send ``localhost`` and every ``*.localhost`` to this machine (RFC 6761), so
subdomains need nothing more there. On a real name, ``https://hub.example.edu``, the name and
``*.hub.example.edu`` must point at the server (a wildcard DNS entry) and the certificate
must name both. An IP address has no subdomains: users then share one origin, as they do with
``MINITORCH_HUB_SUBDOMAINS=off`` (for a name without a wildcard DNS entry).

Each user's host name is JupyterHub's ``idna`` hook's: a name that is a DNS label as it is
(lowercase letters, digits and inner ``-``, not all digits) is used as it is; any other name
the roster allows (``j.smith``, ``jo_smith``, ``20231234``) becomes ``u-<letters>--<hash>``,
a label no other name maps to.
"""
from __future__ import annotations

import ipaddress
from dataclasses import dataclass
from urllib.parse import quote, urlsplit

from jupyterhub.utils import subdomain_hook_idna

URL_VARIABLE = "MINITORCH_HUB_URL"
SUBDOMAINS_VARIABLE = "MINITORCH_HUB_SUBDOMAINS"
DEFAULT_HOST = "localhost"


@dataclass(frozen=True)
class Origins:
    """The hub's public address (``url``, no path) and whether users have hosts of their own."""

    url: str
    subdomains: bool

    @property
    def host(self) -> str:
        return urlsplit(self.url).hostname or ""

    def server(self, user: str) -> str:
        """The address of ``user``'s server, e.g. ``http://alice.localhost:8000/user/alice/``."""
        path = f"/user/{quote(user, safe='')}/"
        if not self.subdomains:
            return self.url + path
        parts = urlsplit(self.url)
        port = f":{parts.port}" if parts.port else ""
        return f"{parts.scheme}://{subdomain_hook_idna(user, self.host, 'user')}{port}{path}"


def plan(url: str | None, subdomains: str | None, port: int, https: bool) -> Origins:
    """The origins from ``MINITORCH_HUB_URL`` and ``MINITORCH_HUB_SUBDOMAINS`` (``None``:
    unset), the port the hub listens on and whether it serves HTTPS itself; ``ValueError``
    saying what is wrong with either."""
    url = (url or f"{'https' if https else 'http'}://{DEFAULT_HOST}:{port}").rstrip("/")
    parts = urlsplit(url)
    if parts.scheme not in ("http", "https") or not parts.hostname:
        raise ValueError(f"{URL_VARIABLE}={url!r} is not an address such as "
                         "https://hub.example.edu or http://localhost:8000")
    if parts.path or parts.query or parts.fragment or parts.username:
        raise ValueError(f"{URL_VARIABLE}={url!r} must be scheme, host and port alone "
                         "(the hub is served at /, not under a path)")
    if https and parts.scheme == "http":
        raise ValueError(f"{URL_VARIABLE}={url!r} is http:// but the hub serves HTTPS "
                         "(MINITORCH_HUB_SSL_CERT): write https://")
    return Origins(url, _subdomains(subdomains, parts.hostname))


def _subdomains(setting: str | None, host: str) -> bool:
    """``on`` (the default, on a name), or ``off`` (the default on an IP address)."""
    choice = (setting or "").strip().lower()
    if choice not in ("", "on", "off"):
        raise ValueError(f"{SUBDOMAINS_VARIABLE}={setting!r} must be on or off")
    if choice == "off":
        return False
    if _is_address(host):
        if choice == "on":
            raise ValueError(f"{SUBDOMAINS_VARIABLE}=on, but {host} is an IP address, which has "
                             f"no subdomains: set {URL_VARIABLE} to a name (http://localhost:"
                             "<port>, or one with a wildcard DNS entry)")
        return False
    return True


def _is_address(host: str) -> bool:
    try:
        ipaddress.ip_address(host)
    except ValueError:
        return False
    return True
