"""The teacher's kit, apart from the learners' ``utils`` package: the student edition, nbgrader
source notebooks, and grading. ``python -m classroom --help`` lists the commands.

- ``classroom.exercises``  finding a chapter's exercises (solution cells, check cells, names, hints)
- ``classroom.edition``    the student edition (solutions out, MyST turned into plain Markdown)
- ``classroom.running``    running each exercise as a stub and solved (what the tests rely on)
- ``classroom.grading``    running submissions and reading each check's verdict
"""

from classroom.edition import (
    chapter_notebooks,
    make_student,
    verify_student,
    write_student_edition,
)
from classroom.exercises import (
    BEGIN,
    END,
    STUB_COMMENT,
    Exercise,
    cell_python,
    clear_solution,
    find_exercises,
    gate_problems,
    solution_lines,
)
from classroom.grading import grade_notebook
from classroom.running import (
    Outcome,
    Run,
    check,
    check_exercises,
    exercise_outcome,
    exercise_outcomes,
    notebook_context,
    notebook_imports,
    outcome_problems,
    run_exercise,
    run_exercise_both,
    run_exercises_in_kernel,
    run_with_answer,
    slice_cells,
)

__all__ = [
    "BEGIN", "END", "STUB_COMMENT", "Exercise", "Outcome", "Run", "cell_python", "chapter_notebooks",
    "check", "check_exercises", "clear_solution", "exercise_outcome", "exercise_outcomes",
    "find_exercises", "gate_problems", "grade_notebook", "make_student", "notebook_context",
    "notebook_imports", "outcome_problems", "run_exercise", "run_exercise_both",
    "run_exercises_in_kernel", "run_with_answer", "slice_cells", "solution_lines", "verify_student",
    "write_student_edition",
]
