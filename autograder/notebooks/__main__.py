"""``python -m autograder.notebooks {sync,release,lint,figures,schedule}``: see the package
docstring."""
from __future__ import annotations

import argparse
import sys
from pathlib import Path

from autograder.notebooks.units import ROOT


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m autograder.notebooks", description=__doc__)
    parser.add_argument("--root", type=Path, default=ROOT, help="the course directory")
    commands = parser.add_subparsers(dest="command", required=True)
    sync_parser = commands.add_parser("sync", help="fill provided cells, strip outputs in source/")
    sync_parser.add_argument("--check", action="store_true",
                             help="write nothing; exit 1 if anything is out of sync")
    release_parser = commands.add_parser("release", help="sync, then generate release/ with nbgrader")
    release_parser.add_argument("units", nargs="*", help="unit names (default: all)")
    commands.add_parser("lint", help="check the rules of every source and release notebook")
    figures_parser = commands.add_parser(
        "figures", help="execute the source notebooks with 'stretch-figure' cells; save their "
                        "plots as docs/img/<cell id>.png")
    figures_parser.add_argument("units", nargs="*", help="unit names (default: all)")
    schedule_parser = commands.add_parser(
        "schedule", help="the term in schedule.toml: each unit's window, what its release "
                         "carries, and whether the plan keeps solutions in until units close")
    schedule_parser.add_argument("--as-of", help="as on this ISO 8601 date or date-time")
    args = parser.parse_args(argv)
    root = args.root.resolve()

    if args.command == "sync":
        from autograder.notebooks.sync import sync
        report = sync(root, check=args.check)
        print("\n".join(report) or "source/ is in sync.")
        return 1 if args.check and report else 0
    if args.command == "release":
        from autograder.notebooks.release import release
        for unit in release(root, args.units):
            print(f"released {unit.release.relative_to(root)}")
        return 0
    if args.command == "figures":
        from autograder.notebooks.figures import figures
        for path in figures(root, args.units):
            print(f"wrote {path.relative_to(root)}")
        return 0
    if args.command == "schedule":
        return _schedule(root, args.as_of)
    from autograder.notebooks.lint import lint
    problems = lint(root)
    print("\n".join(problems) or "All notebooks follow the rules.")
    return 1 if problems else 0


def _schedule(root: Path, as_of: str | None) -> int:
    """Print the term; exit 1 when the schedule cannot be read or breaks the rule."""
    from autograder.notebooks.handout import as_of as instant
    from autograder.notebooks.handout import plan_problems, timetable
    from autograder.notebooks.schedule import ScheduleError
    try:
        print("\n".join(timetable(root, instant(root, as_of))))
    except ScheduleError as error:
        print(f"error: {error}", file=sys.stderr)
        return 1
    problems = plan_problems(root)
    print("\n".join(problems) or "No unit goes out before the units whose solutions it carries close.")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
