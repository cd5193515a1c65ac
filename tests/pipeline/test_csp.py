"""``autograder.pipeline.term.csp``: the policy lets a page run the inline scripts of Jupyter's and
nbgrader's own templates and nothing a student could put in a page. (No server: the browser
test ``test_inert_pages`` runs Formgrader and JupyterLab under it.)"""
from __future__ import annotations

import pytest

from autograder.pipeline.term import csp

HEAD = '<head><script>\nvar base_url = "/user/instructor";\n</script>'
STUDENT = ('<script>\nvar student_id = "{}";\n</script>'
           '<script src="/formgrader/static/js/manage_students_assignments.js"></script></head>')


HOST = "127.0.0.1:8888"


@pytest.fixture(scope="module")
def policy() -> csp.Policy:
    return csp.Policy()


def _sources(header: str) -> list[str]:
    return header.split(";")[0].split()[1:]


def test_formgraders_own_inline_scripts_are_allowed_by_hash(policy):
    page = HEAD + STUDENT.format("ada")
    header = policy.header("/formgrader/manage_students/ada", page, HOST)
    for script in ('\nvar base_url = "/user/instructor";\n', '\nvar student_id = "ada";\n'):
        assert csp.digest(script) in _sources(header)
    assert "'unsafe-inline'" not in header and "'unsafe-eval'" not in header
    assert header.endswith("object-src 'none'; base-uri 'self'")


@pytest.mark.parametrize("student_id", [
    '"; fetch(\'/formgrader/api/grades\'); "',          # out of the string
    '</script><script>alert(1)</script>',                # out of the script element
])
def test_data_that_breaks_out_of_a_templates_string_is_not_allowed(policy, student_id):
    page = HEAD + STUDENT.format(student_id)
    allowed = _sources(policy.header("/formgrader/manage_students/x", page, HOST))
    assert csp.digest('\nvar base_url = "/user/instructor";\n') in allowed
    assert len([s for s in allowed if s.startswith("'sha256-")]) == len(policy.handlers) + 1


def test_a_script_of_the_students_own_is_not_allowed_nor_a_second_of_a_known_shape(policy):
    page = HEAD + "<body><script>alert(1)</script><script>var base_url = 'https://evil';</script>"
    allowed = _sources(policy.header("/formgrader/submissions/1/", page, HOST))
    assert csp.digest("alert(1)") not in allowed
    assert csp.digest("var base_url = 'https://evil';") not in allowed


def test_only_the_templates_fixed_event_handlers_are_allowed(policy):
    assert csp.digest("toggle_name(true);") in policy.handlers
    assert csp.digest("alert(1)") not in policy.handlers


def test_jupyterlab_may_evaluate_strings_formgrader_may_not(policy):
    assert "'unsafe-eval'" in _sources(policy.header("/user/instructor/lab", None, HOST))
    assert "'unsafe-eval'" not in policy.header("/user/instructor/formgrader/gradebook", None, HOST)


def _respond(policy, status: int, body: bytes) -> list[str]:
    from tornado.httputil import HTTPHeaders, HTTPServerRequest, RequestStartLine
    line = RequestStartLine("GET", "/formgrader/manage_assignments", "HTTP/1.1")
    request = HTTPServerRequest(start_line=line, headers=HTTPHeaders({"Host": "127.0.0.1"}))
    transform = csp.transform(policy)(request)
    headers = HTTPHeaders({"Content-Type": "text/html; charset=UTF-8"})
    transform.transform_first_chunk(status, headers, body, True)
    return headers.get_list("Content-Security-Policy")


def test_a_page_gets_its_hashes_and_a_304_keeps_the_policy_the_browser_has(policy):
    """A reload answered 304 (tornado's Etag) must not replace the cached page's policy by
    one without its hashes: Formgrader's page then stalled at "Loading, please wait"."""
    [header] = _respond(policy, 200, HEAD.encode())
    assert csp.digest('\nvar base_url = "/user/instructor";\n') in _sources(header)
    assert _respond(policy, 304, b"") == []


def test_scripts_come_from_the_servers_own_static_paths_only(policy):
    """Not 'self', which took in files/ (a student's .js there ran: issue 46)."""
    hub = csp.Policy(base_url="/user/instructor/")
    sources = _sources(hub.header("/user/instructor/lab", None, "instructor.hub.example:8000"))
    assert [s for s in sources if not s.startswith("'")] == [
        "instructor.hub.example:8000/user/instructor/static/",
        "instructor.hub.example:8000/user/instructor/lab/extensions/",
        "instructor.hub.example:8000/user/instructor/formgrader/static/"]


@pytest.mark.parametrize("host", ["evil.example; script-src *", "a b", ""])
def test_a_host_that_is_not_a_plain_name_gets_no_script_source(policy, host):
    assert [s for s in _sources(policy.header("/lab", None, host)) if not s.startswith("'")] == []
