"""One password per person, failed logins slowed down, a strong instructor password.

``<state>/logins.csv`` (0600, root's) holds ``user,password`` for the instructor and every
student: the hub writes a random password (16 characters, about 96 bits) for each new
student, which the instructor hands out; ``python -m autograder.hub.logins reset STATE USER``
gives one a new password. The hub reads the file at each login, so a reset needs no restart.

The instructor's password is theirs to choose (``MINITORCH_HUB_INSTRUCTOR_PASSWORD``, kept in
the file) or made up; a chosen one must be at least 12 characters that zxcvbn, which knows
common passwords, words, names, dates, keyboard walks and repeats, rates 4 (very hard to
guess), so ``instructor-xxxxxxxxxx...`` is refused for all its length.

Failed logins (``Throttle``) are slowed down per client address and per account, so that
nobody's wrong passwords keep anyone else out. An address gets ``FREE`` failures in a row at
one name, ``ADDRESS_FREE`` at all names (a login from it starts both again); then each further attempt from it must wait ``WAIT``
seconds after its last failure and is answered ``429`` without being checked. An account that
failed ``FREE`` times in the last ``WAIT`` seconds, from anywhere, has every attempt checked
``DELAY`` seconds late: slower, never refused. The right password from an address that did
not fail is always checked, whatever strangers try at the same name.

The address is the one the proxy saw: the last hop of ``X-Forwarded-For``, which
configurable-http-proxy appends, never what the client says of itself (an ``X-Real-Ip``
header, which tornado's ``remote_ip`` believes, or hops of its own before the proxy's). The
cost: users behind one address (a NAT) share its counts; the hub's log names each failure
and its address.
"""
from __future__ import annotations

import asyncio
import csv
import hmac
import io
import math
import secrets
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path

from jupyterhub.auth import Authenticator
from tornado import web
from tornado.httputil import HTTPServerRequest
from traitlets import Unicode

from autograder.hub.state import private_file, write_private

FREE, ADDRESS_FREE, WAIT, DELAY = 5, 20, 60.0, 1.0
MIN_LENGTH, MIN_SCORE = 12, 4


def weakness(password: str, user: str) -> str | None:
    """Why ``password`` is too weak for ``user`` (None when it is strong enough)."""
    from zxcvbn import zxcvbn
    if len(password) < MIN_LENGTH:
        return f"it has {len(password)} characters, fewer than {MIN_LENGTH}"
    verdict = zxcvbn(password[:100], user_inputs=[user, "minitorch", "jupyter", "course", "hub"])
    if verdict["score"] < MIN_SCORE:
        hint = verdict["feedback"]["warning"] or "it follows a pattern that is quick to guess"
        return (f"zxcvbn rates it {verdict['score']} of 4 ({hint.rstrip('.')}); use a passphrase "
                "of four or more random words, or leave it unset to have one made up")
    return None


def read(path: Path) -> dict[str, str]:
    with open(path, newline="", encoding="utf-8") as file:
        return {row["user"]: row["password"] for row in csv.DictReader(file)}


def write(path: Path, passwords: dict[str, str]) -> None:
    text = io.StringIO()
    rows = csv.DictWriter(text, ["user", "password"], lineterminator="\n")
    rows.writeheader()
    rows.writerows({"user": user, "password": password} for user, password in passwords.items())
    write_private(path, text.getvalue())


def ensure(path: Path, users: list[str], instructor: str, chosen: str | None = None) -> list[str]:
    """Give every user in ``users`` and ``instructor`` a password in ``path`` (0600), the
    instructor ``chosen`` if given; the users who got a new one."""
    private_file(path, "user,password\n")
    passwords = read(path)
    new = [user for user in [instructor, *users] if user not in passwords]
    passwords.update({user: secrets.token_urlsafe(12) for user in new})
    if chosen is not None and passwords[instructor] != chosen:
        passwords[instructor] = chosen
        new += [] if instructor in new else [instructor]
    write(path, passwords)
    return new


@dataclass
class Throttle:
    """Failures in a row per (address, name) and per address, refused past ``free`` and
    ``address_free`` for ``wait`` seconds; failures per name, which only slow it down."""

    free: int = FREE
    address_free: int = ADDRESS_FREE
    wait: float = WAIT
    delay: float = DELAY
    failures: dict[tuple[str, ...], tuple[int, float]] = field(default_factory=dict)

    def remaining(self, address: str, user: str) -> float:
        """Seconds an attempt from ``address`` at ``user`` must still wait (0: it is checked)."""
        return max(self._left(("pair", address, user), self.free),
                   self._left(("address", address), self.address_free))

    def slowed(self, user: str) -> float:
        """Seconds each check of ``user`` waits while the name is being guessed at."""
        return self.delay if self._left(("user", user), self.free) else 0.0

    def failed(self, address: str, user: str) -> None:
        now = time.monotonic()
        for key in (("pair", address, user), ("address", address), ("user", user)):
            self.failures[key] = (self.failures.get(key, (0, now))[0] + 1, now)
        if len(self.failures) > 100_000:      # a flood from many addresses: forget the stale
            self.failures = {k: v for k, v in self.failures.items() if now - v[1] < self.wait}

    def succeeded(self, address: str, user: str) -> None:
        self.failures.pop(("pair", address, user), None)
        self.failures.pop(("address", address), None)

    def _left(self, key: tuple[str, ...], free: int) -> float:
        count, last = self.failures.get(key, (0, 0.0))
        return 0.0 if count < free else max(0.0, last + self.wait - time.monotonic())


def client_address(request: HTTPServerRequest) -> str:
    """The address the proxy saw ``request`` come from (see the module)."""
    hops = request.headers.get("X-Forwarded-For", "")
    return hops.split(",")[-1].strip() or request.remote_ip


class CourseAuthenticator(Authenticator):
    """Users log in with their own password from ``logins_file``, throttled (see the module)."""

    logins_file = Unicode(help="The 0600 CSV of user,password.").tag(config=True)

    def __init__(self, **kwargs) -> None:
        super().__init__(**kwargs)
        self.throttle = Throttle()

    async def authenticate(self, handler, data: dict) -> str | None:
        user = self.normalize_username(data.get("username") or "")
        address = client_address(handler.request)
        wait = self.throttle.remaining(address, user)
        if wait:
            raise web.HTTPError(429, f"Too many failed logins for {user!r} from {address}: "
                                     f"try again in {math.ceil(wait)} s")
        await asyncio.sleep(self.throttle.slowed(user))
        expected = read(Path(self.logins_file)).get(user)
        given = (data.get("password") or "").encode()
        if expected is not None and hmac.compare_digest(expected.encode(), given):
            self.throttle.succeeded(address, user)
            return user
        self.throttle.failed(address, user)
        self.log.warning("Failed login for %r from %s", user, address)
        return None


def reset(path: Path, user: str) -> str:
    """A new password for ``user`` in ``path``; the password."""
    passwords = read(path)
    if user not in passwords:
        raise SystemExit(f"{user!r} is not in {path}")
    passwords[user] = secrets.token_urlsafe(12)
    write(path, passwords)
    return passwords[user]


if __name__ == "__main__":
    if len(sys.argv) != 4 or sys.argv[1] != "reset":
        raise SystemExit("usage: python -m autograder.hub.logins reset STATE_FOLDER USER")
    reset(Path(sys.argv[2]) / "logins.csv", sys.argv[3])
    print(f"{sys.argv[3]}'s new password is in {Path(sys.argv[2]) / 'logins.csv'}")
