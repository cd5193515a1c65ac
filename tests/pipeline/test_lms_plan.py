"""Who handed what in, read from Canvas's and Moodle's download names (term/lms/uploads.py),
the course's roster (roster.py) and the plan for a whole download (plan.py)."""
from __future__ import annotations

import unicodedata

import pytest

from autograder.pipeline.term.lms.plan import make_plan
from autograder.pipeline.term.lms.roster import Roster, RosterError
from autograder.pipeline.term.lms.uploads import ascii_slug, parse

NB = "01_setup.ipynb"


@pytest.mark.parametrize("path, lms, name, lms_id, file_id, student_id", [
    (f"x/doejane_1201_90001_{NB}", "Canvas", "doejane", "1201", NB, "doejane-1201"),
    ("x/kimcy_LATE_1203_90117_01_setup-2.ipynb", "Canvas", "kimcy", "1203", NB, "kimcy-1203"),
    (f"x/garcíajosé_1302_90005_{NB}", "Canvas", "garcíajosé", "1302", NB, "garciajose-1302"),
    (f"x/王芳_1303_90006_{NB}", "Canvas", "王芳", "1303", NB, "student-1303"),
    (f"x/Jane Doe_4411_assignsubmission_file_/{NB}", "Moodle", "Jane Doe", "4411", NB, "jane-doe"),
    (f"Zoë O'Brien-Łukasz_4412_assignsubmission_file_/{NB}", "Moodle", "Zoë O'Brien-Łukasz",
     "4412", NB, "zoe-o-brien-lukasz"),
])
def test_canvas_and_moodle_names(path, lms, name, lms_id, file_id, student_id):
    upload = parse(path)
    assert (upload.lms, upload.name, upload.lms_id, upload.file_id, upload.default_id) == \
        (lms, name, lms_id, file_id, student_id)


@pytest.mark.parametrize("path, why", [
    ("x/my homework.ipynb", "not a Canvas or Moodle download name"),
    (f"x/doejane_1201_90001_hw/roebob_1202_90002_{NB}",
     "inside another upload (doejane_1201_90001_hw)"),
    (f"Jane Doe_4411_assignsubmission_file_/Bob Roe_4412_assignsubmission_file_/{NB}",
     "inside another upload (Jane Doe_4411_assignsubmission_file_)"),
])
def test_a_file_the_lms_did_not_name_is_not_read_as_a_hand_in(path, why):
    assert parse(path) == why


def test_letters_without_an_ascii_form_are_spelled_out():
    assert ascii_slug("Søren Æbelø Straße", "-") == "soren-aebelo-strasse"


def test_the_newest_upload_of_a_notebook_wins():
    plan = make_plan([f"kimcy_1203_90003_{NB}", "kimcy_LATE_1203_90117_01_setup-1.ipynb"])
    assert plan.collect == {"kimcy_LATE_1203_90117_01_setup-1.ipynb": ("kimcy-1203", NB)}
    assert plan.skipped[f"kimcy_1203_90003_{NB}"].startswith(
        "an older upload of 01_setup.ipynb by kimcy-1203")


def test_one_canvas_name_for_two_accounts_is_no_clash():
    plan = make_plan([f"doejane_1201_90001_{NB}", f"doejane_1302_90002_{NB}"])
    assert sorted(plan.collect.values()) == [("doejane-1201", NB), ("doejane-1302", NB)]
    assert plan.set_aside == []


MOODLE_CLASH = [f"Jane Doe_4411_assignsubmission_file_/{NB}",
                f"Jane Doe_4412_assignsubmission_file_/{NB}"]


def test_one_moodle_name_for_two_students_sets_both_aside_naming_the_other():
    plan = make_plan(MOODLE_CLASH + [f"Bob Roe_4413_assignsubmission_file_/{NB}"])
    assert list(plan.collect.values()) == [("bob-roe", NB)]
    first, second = plan.set_aside
    assert first.startswith("Moodle 'Jane Doe' (participant 4411, ")
    assert "2 accounts would be jane-doe (also Moodle 'Jane Doe' (participant 4412, " in first
    assert plan.skipped[MOODLE_CLASH[1]] == second


# The eight spellings of one name: as typed, decomposed (NFD), upper case, full-width,
# without accents, one accent, with a dot, with a doubled space.
JOSE = "José García"
LOOK_ALIKES = [JOSE, unicodedata.normalize("NFD", JOSE), JOSE.upper(), "Ｊｏｓé Ｇａｒｃíａ",
               "Jose Garcia", "José Garcia", "José. García", "José  García"]


def moodle(name: str, participant: int) -> str:
    return f"{name}_{participant}_assignsubmission_file_/{NB}"


def test_eight_look_alikes_are_set_aside_and_the_class_is_collected():
    paths = [moodle(name, 5000 + i) for i, name in enumerate(LOOK_ALIKES)]
    plan = make_plan(paths + [moodle("Bob Roe", 4413)])
    assert list(plan.collect.values()) == [("bob-roe", NB)]
    assert len(plan.set_aside) == 8 and all("8 accounts would be jose-garcia" in line
                                            for line in plan.set_aside)


@pytest.mark.parametrize("name", LOOK_ALIKES[1:])
def test_a_look_alike_alone_is_not_collected_as_the_recorded_student(name):
    known = {"jose-garcia": {"lms": "Moodle", "lms_name": JOSE, "lms_id": ""}}
    plan = make_plan([moodle(name, 5101)], known=known)
    assert plan.collect == {}
    assert all("jose-garcia was Moodle 'José García' in an earlier download" in line
               for line in plan.set_aside)
    assert make_plan([moodle(JOSE, 5103)], known=known).collect == {
        moodle(JOSE, 5103): ("jose-garcia", NB)}


def test_canvas_look_alikes_keep_their_user_ids():
    paths = [f"{name.replace(' ', '')}_{1300 + i}_9000{i}_{NB}" for i, name in enumerate(LOOK_ALIKES)]
    plan = make_plan(paths)
    assert sorted(sid for sid, _ in plan.collect.values()) == [
        f"josegarcia-{1300 + i}" for i in range(8)]


def test_a_look_alike_of_a_roster_name_never_takes_its_id(tmp_path):
    roster = tmp_path / "students.csv"
    roster.write_text(f"lms_name,lms_id,student_id\n{JOSE},,jgarcia\n", encoding="utf-8")
    plan = make_plan([moodle(JOSE, 5201), moodle("ＪＯＳÉ ＧＡＲＣÍＡ", 5202)], Roster.load(roster))
    assert list(plan.collect.values()) == [("jgarcia", NB)]
    assert plan.collect == {moodle(JOSE, 5201): ("jgarcia", NB)}
    assert plan.set_aside[0].startswith("Moodle 'ＪＯＳÉ ＧＡＲＣÍＡ' (participant 5202")


def test_the_roster_tells_them_apart_most_specific_row_first(tmp_path):
    roster = tmp_path / "students.csv"
    roster.write_text("lms_name,lms_id,student_id\nJane Doe,4411,jdoe1\njane doe,,jdoe\n"
                      ",1201,jane\n", encoding="utf-8")
    plan = make_plan(MOODLE_CLASH + [f"doejane_1201_90001_{NB}"], Roster.load(roster))
    assert sorted(plan.collect.values()) == [("jane", NB), ("jdoe", NB), ("jdoe1", NB)]
    assert plan.set_aside == []


def test_a_name_that_makes_no_id_is_skipped_with_the_reason():
    path = f".._4411_assignsubmission_file_/{NB}"
    assert make_plan([path]).skipped == {
        path: "no letter or digit in '..' to make a student id of: give it one in the roster "
              "(c.LmsFileNames.roster)"}


def test_markup_in_a_name_never_reaches_the_id():
    plan = make_plan([f"<i>Jane Doe<script>_4411_assignsubmission_file_/{NB}"])
    assert list(plan.collect.values()) == [("i-jane-doe-script", NB)]


def test_an_unsafe_file_name_is_skipped():
    path = "Jane Doe_4411_assignsubmission_file_/<img src=x>.ipynb"
    assert "holds characters other than" in make_plan([path]).skipped[path]


@pytest.mark.parametrize("text, why", [
    ("name,id,student\n", "the first line must be lms_name,lms_id,student_id"),
    ("lms_name,lms_id,student_id\nJane,,../x\n", "line 2: the student id '../x'"),
    ("lms_name,lms_id,student_id\n,,jane\n", "line 2: no LMS name nor id"),
    ("lms_name,lms_id,student_id\nJane,1,a\nJane,1,b\n", "line 3: 'Jane' '1' again"),
    ("lms_name,lms_id,student_id\nJane,1\n", "line 2: 2 columns, not 3"),
])
def test_a_bad_roster_is_refused_naming_the_line(tmp_path, text, why):
    (tmp_path / "students.csv").write_text(text)
    with pytest.raises(RosterError, match=why.replace(".", r"\.")):
        Roster.load(tmp_path / "students.csv")
