"""The classroom kit: a student edition of the chapters with the solutions taken out, and its checks.

    python -m classroom student --out student            # student/NN_name.ipynb and student/nbgrader/
    python -m classroom student --out student --verify   # ... then check it (see below)
    python -m classroom check                            # check, writing nothing
    python -m classroom grade SUBMISSIONS --csv grades.csv   # run submissions, grade each exercise
    python -m classroom grade SUBMISSIONS --roster roster.csv  # ... with 0 for work not handed in
    python -m classroom gradebook grades.csv --roster roster.csv --lms canvas --out canvas.csv  # for the LMS
    python -m classroom nbgrader COMMAND ...             # nbgrader in student/nbgrader, set up for it
    python -m classroom nbgrader checkpoints ASSIGNMENT  # keep the reference run's trained models
    python -m classroom questions --out question_bank    # the question bank: Moodle GIFT, Canvas QTI

``student`` writes the student edition (``make student``) and, in ``student/nbgrader/``, the same
chapters as an nbgrader course (``classroom.nbgrader_course``; its README says how a teacher uses it).
``grade`` takes folders or notebooks: nbgrader's ``submitted/<student>/<assignment>/<notebook>.ipynb``,
``<student>/<notebook>.ipynb`` or flat ``<student>__<notebook>.ipynb``; it runs each with the checks
strict and prints, per student and notebook, each exercise's points (1/2/3 for Easy/Medium/Hard) and
the check's diagnosis, with totals; ``--csv`` writes student, notebook, exercise, points, max_points,
passed, diagnosis.

The student edition follows nbgrader's ``ClearSolutions`` convention, with nbformat only:

- in every code cell the lines from ``### BEGIN SOLUTION`` to ``### END SOLUTION`` become
  ``# YOUR CODE HERE`` and ``raise NotImplementedError("Exercise N.k: write your solution here")`` at
  the indentation of the ``### BEGIN SOLUTION`` line (the ``def`` line above it stays);
- the ``{solution-start}`` and ``{solution-end}`` markdown cells, and any markdown between them, go;
  so do the cells tagged ``lab-solution`` (a find-the-bug lab's fixes);
- MyST becomes plain Markdown (``classroom.markdown``): ``{exercise}`` blocks become "### Exercise
  N.k: Title" headings, dropdown answers ``<details>`` blocks, admonitions blockquotes, roles text;
- the auto-check cells stay; every output and execution count is cleared.

Exercise rule (the tests rely on it): an exercise is SELF-CONTAINED. Its solution cell(s) and the
auto-check cell after ``{solution-end}`` must run in a fresh namespace that holds only the notebook's
imports (every top-level ``import`` / ``from ... import``) and, from the cells before the exercise,
its top-level ``def`` / ``class`` statements and literal constants (``d_model = 32``), but none of its
computations (no data, model or tensor made earlier). Data the check needs is made inside the check
cell. The check calls ``utils.checks.check_function`` (or ``check_value``) with a literal ``hint=``;
on the stub it must raise ``CheckFailed`` saying "not implemented yet" with that hint, and on the
reference solution it must pass. An exercise that breaks the rule still gets tested, more slowly: with
the earlier cells that define the names it reads (``slice_cells``), or failing that in a run of its
whole notebook in a Jupyter kernel (``run_exercises_in_kernel``); the test warns.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from classroom import gradebook
from classroom.edition import write_student_edition
from classroom.grading import grade_all, read_roster, report, with_missing_work, write_csv
from classroom.hub import DEFAULT_COURSE
from classroom.hub import main as hub_main
from classroom.nbgrader_course import write_nbgrader_course
from classroom.running import check


def main(argv: list[str] | None = None) -> int:
    """Command line: ``student`` (write the student edition), ``check`` (verify one), ``grade``."""
    usage = __doc__.split("The student edition follows")[0].split("\n", 1)[1]
    parser = argparse.ArgumentParser(prog="python -m classroom", description=__doc__.splitlines()[0],
                                     epilog=usage, formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = parser.add_subparsers(dest="command", required=True)
    student = sub.add_parser("student", help="write the student edition")
    student.add_argument("--out", default="student", help="folder to write (default: student)")
    student.add_argument("--verify", action="store_true", help="then check it, running every exercise")
    student.add_argument("--language", default="en", choices=("en", "zh_CN", "zh_TW"),
                         help="the language of the edition's READMEs (the notebooks are the ones given)")
    checker = sub.add_parser("check", help="check the student edition and run every exercise's check")
    checker.add_argument("--out", default=None, help="check this written edition, not one made in memory")
    checker.add_argument("--no-execute", action="store_true", help="only the static checks")
    for p in (student, checker):
        p.add_argument("--chapters", default="chapters", help="folder of the full notebooks")
    grader = sub.add_parser("grade", help="run students' notebooks and grade each exercise by its check")
    grader.add_argument("submissions", nargs="+",
                        help="folders or notebooks: submitted/<student>/<assignment>/<nb>.ipynb, "
                             "<student>/<nb>.ipynb or <student>__<nb>.ipynb")
    grader.add_argument("--csv", default=None, help="also write one row per exercise to this CSV file")
    grader.add_argument("--chapters", default="chapters", help="the full notebooks (for the points)")
    grader.add_argument("--timeout", type=int, default=1800, help="seconds a cell may run")
    grader.add_argument("--roster", default=None,
                        help="the class: a CSV of student ids (or nbgrader's gradebook.db); work "
                             "not handed in scores 0 per exercise")
    grader.add_argument("--assignments", nargs="*", default=None,
                        help="notebooks assigned (e.g. 08_transformer_decoder), also when nobody "
                             "submitted them; default: every notebook anyone submitted")
    grader.add_argument("--checkpoints", default=None,
                        help="a folder of kept training runs, one subfolder per notebook (written by "
                             "`python -m classroom nbgrader checkpoints`): load them, do not train")
    gradebook.add_arguments(sub.add_parser(
        "gradebook", help="the grades as a CSV for Canvas's or Moodle's gradebook, one row per roster "
        "student, one column per exercise, 0 for work not handed in (classroom/gradebook.py)"))
    hub = sub.add_parser("nbgrader", help="run an nbgrader command in the course folder, set up for it "
                         "(PATH, threads, the kept training runs); or `checkpoints ASSIGNMENT`")
    hub.add_argument("--course", default=str(DEFAULT_COURSE),
                     help=f"the nbgrader course folder (default: {DEFAULT_COURSE})")
    hub.add_argument("nbgrader_args", nargs=argparse.REMAINDER, help="nbgrader's command and arguments")
    bank = sub.add_parser("questions", help="write the question bank for Moodle (GIFT) and Canvas (QTI), "
                          "per language (classroom/questions)")
    bank.add_argument("--out", default="question_bank", help="folder to write (default: question_bank)")
    bank.add_argument("--language", nargs="*", default=["en", "zh_CN", "zh_TW"],
                      choices=("en", "zh_CN", "zh_TW"), help="languages to write (default: all three)")
    args = parser.parse_args(argv)
    if args.command == "questions":
        from classroom.questions.export import summary, write_bank

        written = write_bank(Path(args.out), tuple(args.language))
        print(summary())
        print(f"Wrote {len(written)} files to {args.out}/: per language moodle/attention_course.gift "
              "(GIFT, one category per chapter) and canvas/NN_name.zip (QTI, one quiz per chapter)")
        return 0
    if args.command == "nbgrader":
        return hub_main(args.nbgrader_args, Path(args.course))
    if args.command == "grade":
        missing = [name for name in args.submissions if not Path(name).exists()]
        if missing:
            print("No such file or folder:", " ".join(missing))
            return 2
        rows = grade_all(args.submissions, args.chapters, args.timeout, args.checkpoints)
        if args.roster or args.assignments:
            try:
                roster = read_roster(args.roster) if args.roster else []
            except FileNotFoundError as err:
                print(err)
                return 2
            rows = with_missing_work(rows, roster, args.chapters, args.assignments)
        if not rows:
            print("No graded exercise found in", " ".join(args.submissions))
            return 1
        print(report(rows))
        if args.csv:
            write_csv(rows, args.csv)
            print(f"Wrote {len(rows)} rows to {args.csv}")
        return 0
    if args.command == "gradebook":
        return gradebook.run(args)
    if args.command == "student":
        written = write_student_edition(args.chapters, args.out, args.language)
        course = write_nbgrader_course(args.chapters, Path(args.out) / "nbgrader", args.language)
        print(f"Wrote {len(written)} student notebooks to {args.out}/ and {len(course)} nbgrader "
              f"assignments to {args.out}/nbgrader/")
        if not args.verify:
            return 0
        problems = check(args.chapters, args.out, execute=True)
    else:
        problems = check(args.chapters, args.out, execute=not args.no_execute)
    for problem in problems:
        print("PROBLEM:", problem)
    print("Student edition: OK" if not problems else f"Student edition: {len(problems)} problem(s)")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
