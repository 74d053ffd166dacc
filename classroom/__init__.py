"""The teacher's kit, apart from the learners' ``utils`` package: the student edition, nbgrader
source notebooks, and grading. ``python -m classroom --help`` lists the commands:

    python -m classroom student --out student    # student/NN_name.ipynb + student/nbgrader/ (make student)
    python -m classroom student --out student --verify   # ... then run every exercise's check
    python -m classroom check                    # check the edition (made in memory), writing nothing
    python -m classroom grade submitted/ --csv grades.csv  # run submissions, points per exercise
    python -m classroom gradebook grades.csv --roster roster.csv --lms canvas --out canvas.csv
    python -m classroom nbgrader generate_assignment 04_self_attention   # see student/nbgrader/README.md
    python -m classroom questions --out question_bank   # the question bank for Moodle and Canvas

- ``classroom.exercises``       finding a chapter's exercises (solution/check/text cells, names, points)
- ``classroom.markdown``        MyST turned into the plain Markdown JupyterLab and Colab render
- ``classroom.edition``         the student edition (solutions and lab fixes out, plain Markdown)
- ``classroom.nbgrader_course`` the chapters as an nbgrader course (``student/nbgrader/``)
- ``classroom.context``         what an exercise needs from its notebook (imports, definitions, cells)
- ``classroom.running``         running each exercise as a stub and solved (what the tests rely on)
- ``classroom.kernel``          the slow fallback: a whole notebook run in a kernel
- ``classroom.grading``         running submissions and grading each exercise by its check's verdict
- ``classroom.gradebook``       the grades as a CSV that Canvas's or Moodle's gradebook imports
- ``classroom.questions``       the question bank (chNN.yaml), its computed answers, GIFT and QTI export
"""

from classroom.edition import (
    RAW_MYST,
    answer_cells,
    chapter_notebooks,
    converted_cells,
    make_student,
    verify_student,
    write_student_edition,
)
from classroom.exercises import (
    BEGIN,
    END,
    POINTS,
    STUB_COMMENT,
    Exercise,
    cell_python,
    clear_solution,
    difficulty_points,
    find_exercises,
    gate_problems,
    is_lab_solution,
    registry_entry,
    solution_lines,
)
from classroom.grading import Grade, find_submissions, grade_all, grade_notebook, submission_of
from classroom.markdown import myst_to_markdown
from classroom.nbgrader_course import nbgrader_notebook, write_nbgrader_course
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
    "POINTS", "RAW_MYST", "Grade", "converted_cells", "difficulty_points", "find_submissions", "grade_all",
    "is_lab_solution", "myst_to_markdown", "nbgrader_notebook", "submission_of", "write_nbgrader_course",
    "BEGIN", "END", "STUB_COMMENT", "Exercise", "Outcome", "Run", "cell_python", "chapter_notebooks",
    "check", "check_exercises", "clear_solution", "exercise_outcome", "exercise_outcomes",
    "find_exercises", "gate_problems", "grade_notebook", "make_student", "notebook_context",
    "notebook_imports", "outcome_problems", "run_exercise", "run_exercise_both",
    "run_exercises_in_kernel", "run_with_answer", "slice_cells", "solution_lines", "verify_student",
    "write_student_edition", "answer_cells", "registry_entry",
]
