"""``python -m autograder COMMAND``: the instructor's commands (run from the course directory).

    grade     autograde submissions on Dask (``--workers N`` local processes, or
              ``--scheduler tls://HOST:PORT`` with ``--tls-*`` files), merging into the
              gradebook as results arrive
    feedback  generate feedback HTML in parallel (hidden tests never shown)
    manual-grades  hand-graded scores and comments from a CSV (student, assignment, grade_id, score, comment)
    export    the grades as CSV (``nbgrader export``)
    report    the class report: score distributions, pass rates, frequent mistakes
    bundle    what students get: release notebooks, the ``course`` wheel, requirements
    demo      the whole job on a scratch course with made-up students
"""
from __future__ import annotations

import argparse
import sys
from pathlib import Path

from autograder.notebooks.units import ROOT


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="python -m autograder", description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--course", type=Path, default=ROOT, help="the course directory")
    commands = parser.add_subparsers(dest="command", required=True)
    grade = commands.add_parser("grade", help="autograde submissions in parallel")
    grade.add_argument("assignments", nargs="*", help="assignments (default: every unit)")
    grade.add_argument("--workers", type=int, default=2,
                       help="worker processes of the local Dask cluster (default 2)")
    grade.add_argument("--scheduler", help="an existing Dask cluster's scheduler, tls://HOST:PORT "
                                           "(default: $DASK_SCHEDULER_ADDRESS, else a local cluster)")
    grade.add_argument("--tls-ca-file", type=Path, help="for --scheduler: the certificate "
                       "authority that signed the cluster's certificates (PEM)")
    grade.add_argument("--tls-cert", type=Path, help="for --scheduler: the grader's certificate")
    grade.add_argument("--tls-key", type=Path, help="for --scheduler: its private key (chmod 600)")
    grade.add_argument("--insecure", action="store_true",
                       help="allow a tcp:// scheduler, without TLS: anyone who can reach its port "
                            "can run code on its workers and change the grades")
    grade.add_argument("--student", action="append", dest="students", help="only this student")
    grade.add_argument("--force", action="store_true", help="regrade unchanged submissions too")
    grade.add_argument("--timeout", type=int, help="seconds per cell (default: nbgrader_config.py)")
    grade.add_argument("--memory-gb", type=float, default=4.0, help="memory per kernel (GiB)")
    grade.add_argument("--job-seconds", type=int,
                       help="each submission's time budget (default: its unit's, "
                            "autograder/pipeline/job/budget.py)")
    grade.add_argument("--keep", action="store_true", help="keep the job folders (debugging)")
    grade.add_argument("--no-sandbox", action="store_false", dest="sandbox",
                       help="run kernels without bubblewrap (where it cannot run, e.g. macOS); "
                            "student code then has the grader's rights")
    feedback = commands.add_parser("feedback", help="generate feedback HTML in parallel")
    feedback.add_argument("assignments", nargs="*")
    feedback.add_argument("--workers", type=int, default=2)
    feedback.add_argument("--student", action="append", dest="students", help="only this student")
    manual = commands.add_parser("manual-grades", help="hand-graded scores from a CSV file")
    manual.add_argument("csv", type=Path, help="columns: student, assignment, grade_id, score, comment")
    export = commands.add_parser("export", help="grades as CSV")
    export.add_argument("--to", type=Path, help="the CSV file (default: grades.csv)")
    export.add_argument("--lms", action="store_true",
                        help="one row per student, one column per unit (default: grades-lms.csv)")
    report = commands.add_parser("report", help="the class report (HTML)")
    report.add_argument("--out", type=Path, help="default: reports/class-report.html")
    bundle = commands.add_parser("bundle", help="the student bundle")
    bundle.add_argument("--out", type=Path, default=ROOT / "build" / "student-bundle")
    bundle.add_argument("--units", nargs="+", help="these units (default: those schedule.toml "
                                                   "has opened)")
    bundle.add_argument("--as-of", help="build as on this date or date-time (ISO 8601; "
                                        "default: now), e.g. next week's bundle")
    bundle.add_argument("--ignore-schedule", action="store_true",
                        help="ship units that carry the solutions of units still open (printed)")
    demo = commands.add_parser("demo", help="the whole instructor job on a scratch course")
    demo.add_argument("--out", type=Path, default=ROOT / "build" / "demo")
    demo.add_argument("--workers", type=int, default=2)
    demo.add_argument("--timeout", type=int, default=30, help="seconds per cell")
    demo.add_argument("--no-sandbox", action="store_false", dest="sandbox",
                      help="run kernels without bubblewrap")
    return parser


def main(argv: list[str] | None = None) -> int:
    args = _parser().parse_args(argv)
    course = args.course.resolve()
    if args.command == "grade":
        from autograder.pipeline.ledger.grade import GradingError, grade
        from autograder.pipeline.job.job import GiB, Limits
        from autograder.pipeline.executor.tls import TLSError, TLSFiles
        limits = Limits(cell_timeout=args.timeout, memory_bytes=int(args.memory_gb * GiB),
                        job_seconds=args.job_seconds)
        try:
            tls_files = TLSFiles.given(args.tls_ca_file, args.tls_cert, args.tls_key)
            summary = grade(course, args.assignments or None, args.students, args.workers, limits,
                            force=args.force, keep=args.keep, sandbox=args.sandbox,
                            scheduler=args.scheduler, tls_files=tls_files, insecure=args.insecure)
        except (GradingError, TLSError) as error:
            print(f"error: {error}", file=sys.stderr)
            return 2
        print(summary)
        return 130 if summary.interrupted else 75 if summary.stalled else 1 if summary.flagged else 0
    if args.command == "feedback":
        from autograder.pipeline.term.feedback import generate
        print(generate(course, args.assignments or None, args.workers, args.students))
        return 0
    if args.command == "manual-grades":
        from autograder.pipeline.ledger.manual import ManualGradeError, apply
        try:
            print(apply(course, args.csv))
        except (ManualGradeError, OSError) as error:
            print(f"error: {error}", file=sys.stderr)
            return 2
        return 0
    if args.command == "export":
        from autograder.pipeline.term.feedback import export
        from autograder.pipeline.term.lms.lms import write_gradebook_csv
        print(f"wrote {(write_gradebook_csv if args.lms else export)(course, args.to)}")
        return 0
    if args.command == "report":
        from autograder.pipeline.term.report import write_report
        print(f"wrote {write_report(course, args.out)}")
        return 0
    if args.command == "bundle":
        return _bundle(course, args)
    from autograder.pipeline.demo.run import run_demo
    return run_demo(args.out.resolve(), workers=args.workers, timeout=args.timeout,
                    sandbox=args.sandbox)


def _bundle(course: Path, args: argparse.Namespace) -> int:
    from autograder.notebooks.handout import HandoutError, as_of
    from autograder.notebooks.schedule import ScheduleError
    from autograder.notebooks.sync import SyncError
    from autograder.pipeline.term.bundle import BundleError, build
    try:
        now = as_of(course, args.as_of)
        print(f"wrote {build(course, args.out, args.units, now, args.ignore_schedule)}")
    except (BundleError, HandoutError, ScheduleError, SyncError) as error:
        print(f"error: {error}", file=sys.stderr)
        return 2
    return 0


if __name__ == "__main__":
    sys.exit(main())
