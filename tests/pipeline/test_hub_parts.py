"""The course hub's parts that need no hub: limits, the roster, passwords, the sandbox's
command line, the pin of a server's socket, the exchange's folders and the users' origins
(``autograder/hub/``)."""
from __future__ import annotations

import dataclasses
import os
import re
import socket
from pathlib import Path
from urllib.parse import urlsplit

import pytest
from tornado.httputil import HTTPHeaders, HTTPServerRequest

from autograder.hub import exchange, homes, logins, origins, roster, sandbox, server_socket
from autograder.pipeline.sandbox import limits
from autograder.hub.accounts import Account, AccountError, unix_name


def test_limits_read_from_one_variable_and_refuse_nonsense():
    assert limits.parse("memory=4G, processes=512,cpus=0.5") == \
        limits.Limits(memory=4 << 30, processes=512, cpus=0.5, disk=2 << 30)
    assert limits.parse(None).describe() == "memory 2G, 256 processes, 1 CPU, disk 2G, inbound 256M"
    for text, said in [("memory=lots", "must be a size"), ("disk=1M", "less than 64M"),
                       ("cpus=all", "number of cores"), ("processes=3", "16 or more"),
                       ("swap=1G", "is not one of")]:
        with pytest.raises(ValueError, match=said):
            limits.parse(text)


def test_a_roster_names_its_bad_line(tmp_path):
    path = tmp_path / "roster.csv"
    path.write_text("Name,SIS Login ID,Username\nAda L.,x,ada\nAlan T.,y,Alan\n")
    with pytest.raises(roster.RosterError, match=r"line 3: the student id 'Alan' has capitals"):
        roster.read(path)
    path.write_text("student\nada\n../bob\n")
    with pytest.raises(roster.RosterError, match="line 3: the student id '../bob' starts with a dot"):
        roster.read(path)
    path.write_text("email\nada@example.org\n")
    with pytest.raises(roster.RosterError, match="no column named student or username or login"):
        roster.read(path)
    path.write_text("\ufeffstudent,name\nada,Ada\ngrace,Grace\n")     # an LMS export's BOM
    assert roster.read(path) == ["ada", "grace"]


def test_passwords_are_one_per_person_in_a_private_file(tmp_path):
    path = tmp_path / "logins.csv"
    assert logins.ensure(path, ["ada", "grace"], "prof") == ["prof", "ada", "grace"]
    first = logins.read(path)
    assert path.stat().st_mode & 0o777 == 0o600 and len(set(first.values())) == 3
    assert logins.ensure(path, ["ada", "grace", "alan"], "prof", "chosen") == ["alan", "prof"]
    second = logins.read(path)
    assert second["ada"] == first["ada"] and second["prof"] == "chosen"
    assert logins.reset(path, "ada") == logins.read(path)["ada"] != first["ada"]


@pytest.mark.parametrize("password, why", [
    ("short-1!", "fewer than 12"),
    ("instructor-" + "x" * 32, "rates it 3 of 4"),
    ("password123456", "similar to a commonly used password"),
    ("minitorchminitorch", "rates it"),
])
def test_weak_instructor_passwords_are_refused(password, why):
    assert why in logins.weakness(password, "instructor")


def test_strong_passwords_pass():
    assert logins.weakness("plural-wombat-harbour-tangerine-47", "instructor") is None


def test_the_throttle_checks_five_per_address_and_name_then_one_a_minute(monkeypatch):
    clock = [1000.0]
    monkeypatch.setattr(logins.time, "monotonic", lambda: clock[0])
    throttle = logins.Throttle()
    for _ in range(logins.FREE):
        assert throttle.remaining("10.0.0.9", "prof") == 0 and throttle.slowed("prof") == 0
        throttle.failed("10.0.0.9", "prof")
    assert throttle.remaining("10.0.0.9", "prof") == logins.WAIT
    assert throttle.remaining("10.0.0.9", "ada") == 0 and throttle.remaining("10.0.0.1", "prof") == 0
    assert throttle.slowed("prof") == logins.DELAY and throttle.slowed("ada") == 0
    clock[0] += logins.WAIT
    assert throttle.remaining("10.0.0.9", "prof") == 0 and throttle.slowed("prof") == 0
    throttle.succeeded("10.0.0.9", "prof")
    assert throttle.remaining("10.0.0.9", "prof") == 0


def test_an_address_guessing_at_many_names_is_refused_at_all_of_them(monkeypatch):
    monkeypatch.setattr(logins.time, "monotonic", lambda: 1000.0)
    throttle = logins.Throttle()
    for attempt in range(logins.ADDRESS_FREE):
        throttle.failed("10.0.0.9", f"student{attempt}")
    assert throttle.remaining("10.0.0.9", "new") == logins.WAIT
    assert throttle.remaining("10.0.0.1", "new") == 0


def _request(remote_ip: str, **headers: str) -> HTTPServerRequest:
    request = HTTPServerRequest(method="POST", uri="/hub/login", headers=HTTPHeaders(headers))
    request.remote_ip = remote_ip
    return request


def test_the_address_is_the_one_the_proxy_saw_not_the_clients_word():
    forged = _request("10.0.0.1", **{"X-Real-Ip": "10.0.0.1",
                                     "X-Forwarded-For": "10.0.0.1, 10.0.0.9"})
    assert logins.client_address(forged) == "10.0.0.9"
    assert logins.client_address(_request("10.0.0.7")) == "10.0.0.7"


def test_unix_names_are_checked():
    assert unix_name("jupyter-", "ada") == "jupyter-ada"
    with pytest.raises(AccountError, match="cannot be a Unix account name"):
        unix_name("jupyter-", "a" * 30)


def test_the_sandbox_binds_only_what_a_student_may_see(tmp_path):
    view = sandbox.View(Account("jupyter-ada", "ada", 1234, 1234), tmp_path / "homes" / "ada",
                        Path("/opt/student-env"), Path("/opt/python3.11"), Path("/srv/hub/student"),
                        tmp_path / "sandboxes" / "ada",
                        ((tmp_path / "exchange", "/srv/nbgrader/exchange", True),))
    args = sandbox.command(view, "bwrap", "setpriv")
    pairs = {(args[i], args[i + 1], args[i + 2]) for i in range(len(args) - 2)
             if args[i] in ("--bind", "--ro-bind")}
    assert {(kind, inside) for kind, _, inside in pairs if inside.startswith(("/home", "/srv", "/opt"))} \
        == {("--bind", "/home/ada"), ("--ro-bind", "/opt/student-env"),
            ("--ro-bind", "/opt/python3.11"), ("--ro-bind", sandbox.CONFIG),
            ("--bind", "/srv/nbgrader/exchange")}
    assert args[args.index("--") + 1:] == ["setpriv", "--reuid=1234", "--regid=1234",
                                            "--clear-groups", "--inh-caps=-all",
                                            "--bounding-set=-all", "--no-new-privs", "--"]
    assert {"--unshare-pid", "--unshare-ipc", "--die-with-parent"} <= set(args)
    assert "--share-net" not in args and "--unshare-net" not in args   # the instructor's: loopback
    assert "--unshare-net" in sandbox.command(dataclasses.replace(view, own_network=True))


@pytest.mark.skipif(os.geteuid() != 0, reason="mounts: root only")
def test_only_her_own_socket_is_pinned_and_a_link_later_changes_nothing(tmp_path):
    listener = socket.socket(socket.AF_UNIX)
    listener.bind(str(tmp_path / "server.sock"))
    listener.listen(1)
    os.symlink(tmp_path / "server.sock", tmp_path / "link.sock")
    for path, uid in ((tmp_path / "link.sock", 0), (tmp_path / "server.sock", 4343)):
        with pytest.raises(OSError, match="not a socket of uid"):
            server_socket.pin(path, tmp_path / "pinned", uid)
    server_socket.pin(tmp_path / "server.sock", tmp_path / "pinned", 0)
    try:
        os.replace(tmp_path / "link.sock", tmp_path / "server.sock")     # her link, afterwards
        with socket.socket(socket.AF_UNIX) as visitor:
            visitor.connect(str(tmp_path / "pinned"))
            listener.accept()[0].close()
    finally:
        homes.unmount(tmp_path / "pinned")
        listener.close()


INSTRUCTOR, ADA = Account("jupyter-instructor", "instructor", 4242, 4242), Account("jupyter-ada", "ada", 4343, 4343)


@pytest.mark.skipif(os.geteuid() != 0, reason="hands folders to other accounts: root only")
def test_the_exchange_folders_are_handed_to_their_users(tmp_path):
    exchange.folders(tmp_path, "minitorch", ADA, INSTRUCTOR)
    course = tmp_path / "minitorch"
    owners = {str(path.relative_to(tmp_path)): (path.stat().st_uid, path.stat().st_gid,
                                                oct(path.stat().st_mode & 0o7777))
              for path in [course, *course.rglob("*")]}
    assert owners == {"minitorch": (4242, 4242, "0o755"),
                      "minitorch/outbound": (4242, 4242, "0o755"),
                      "minitorch/inbound": (4242, 4242, "0o2733"),
                      "minitorch/feedback": (4242, 4242, "0o711"),
                      "minitorch/students": (0, 0, "0o755"),
                      "minitorch/students/ada": (0, 0, "0o755"),
                      "minitorch/students/ada/feedback": (4242, 4242, "0o755"),
                      "minitorch/students/ada/inbound": (4343, 4242, "0o2750")}


@pytest.mark.skipif(os.geteuid() != 0, reason="hands folders to other accounts: root only")
def test_a_link_the_instructor_put_in_place_of_her_folder_is_not_followed(tmp_path):
    """Her account owns ``outbound``: made a link to a folder of root's, the hub (root)
    would have handed that folder to her at its next start."""
    exchange.course_folders(tmp_path, "minitorch", INSTRUCTOR)
    victim = tmp_path / "root-only"
    victim.mkdir(mode=0o700)
    outbound = tmp_path / "minitorch" / "outbound"
    outbound.rmdir()
    outbound.symlink_to(victim)
    with pytest.raises(OSError, match="the exchange's 'outbound' is not a folder"):
        exchange.course_folders(tmp_path, "minitorch", INSTRUCTOR, ["ada"])
    assert (victim.stat().st_uid, victim.stat().st_mode & 0o777) == (0, 0o700)


def test_each_user_has_an_origin_of_their_own_by_default():
    plan = origins.plan(None, None, 8000, https=False)
    assert plan == origins.Origins("http://localhost:8000", subdomains=True)
    assert plan.server("alice") == "http://alice.localhost:8000/user/alice/"
    assert origins.plan(None, None, 8443, https=True).server("bob") == \
        "https://bob.localhost:8443/user/bob/"
    production = origins.plan("https://hub.example.edu/", None, 8000, https=False)
    assert production.server("ada") == "https://ada.hub.example.edu/user/ada/"


def test_every_name_the_roster_allows_becomes_a_host_name_of_its_own():
    """Roster ids that are DNS labels are their own host names; the others (dots,
    underscores, all digits) get JupyterHub's ``u-<letters>--<hash>``, no two alike."""
    plan = origins.plan("http://hub.localhost:8000", None, 8000, https=False)
    names = ["ada", "grace-h", "j.smith", "jsmith", "j_smith", "20231234", "a" * 70, "instructor"]
    hosts = [urlsplit(plan.server(name)).hostname for name in names]
    labels = [host.removesuffix(".hub.localhost") for host in hosts]
    assert labels[:2] == ["ada", "grace-h"] and labels[3] == "jsmith"
    assert all(re.fullmatch(r"u-[a-z0-9]{1,8}--[0-9a-f]{7}", labels[i]) for i in (2, 4, 5, 6))
    assert len(set(hosts)) == len(names) and all(len(label) <= 63 for label in labels)


def test_one_origin_for_all_where_there_can_be_no_subdomains():
    assert origins.plan("http://127.0.0.1:8000", None, 8000, https=False).server("ada") == \
        "http://127.0.0.1:8000/user/ada/"
    off = origins.plan(None, "off", 8000, https=False)
    assert not off.subdomains and off.server("ada") == "http://localhost:8000/user/ada/"


@pytest.mark.parametrize("url, subdomains, https, said", [
    ("http://127.0.0.1:8000", "on", False, "127.0.0.1 is an IP address, which has no subdomains"),
    ("http://[::1]:8000", "on", False, "::1 is an IP address"),
    ("http://localhost:8000/jupyter", None, False, "must be scheme, host and port alone"),
    ("localhost:8000", None, False, "is not an address such as"),
    ("http://localhost:8000", None, True, "is http:// but the hub serves HTTPS"),
    (None, "yes", False, "MINITORCH_HUB_SUBDOMAINS='yes' must be on or off"),
])
def test_an_address_that_cannot_work_is_refused_saying_why(url, subdomains, https, said):
    with pytest.raises(ValueError, match=re.escape(said)):
        origins.plan(url, subdomains, 8000, https)
