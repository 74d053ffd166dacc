"""nbgrader configuration of the course: run nbgrader commands from this folder."""
import os

c = get_config()  # noqa: F821 (nbgrader provides it)

# The course folder is this file's folder, wherever the course was copied to.
c.CourseDirectory.root = os.path.dirname(os.path.abspath(__file__))
c.ClearSolutions.code_stub = {"python": '# YOUR CODE HERE\nraise NotImplementedError("write your solution here")'}
c.ClearSolutions.text_stub = "YOUR ANSWER HERE"
# Autograding runs every notebook top to bottom; the longest chapters train small models (minutes on
# a laptop CPU). A cell gets this many seconds before it counts as failed.
c.ExecutePreprocessor.timeout = 1800
c.Execute.timeout = 1800
# Grades come from the course's isolated grader, never from the student's kernel: nbgrader still runs
# the notebook (every output stays as the student's feedback), while the course's grader grades each
# exercise again, the submission's code in a sandbox and the checks in this process, and writes its
# verdict into each autograder test cell, which is what SaveAutoGrades scores (classroom/autograder.py,
# classroom/nbgrader_grading.py).
# The isolated grading starts before nbgrader's run and runs beside it (its sandbox is a process of its
# own). FeedbackRun is nbgrader's Execute bounded in time: after a cell times out (a student's cell can
# leave the kernel unable to answer) the rest is not run, since no grade depends on it.
# prepare() loads every check and records the course's files before any student code runs.
from classroom.nbgrader_grading import (  # noqa: E402
    FeedbackRun, IsolatedGrading, StartIsolatedGrading, prepare)
from nbconvert.preprocessors import ClearMetadataPreprocessor  # noqa: E402
from nbgrader.preprocessors import (  # noqa: E402
    AssignLatePenalties, CheckCellMetadata, IgnorePattern, LimitOutput, SaveAutoGrades)

prepare()
c.StartIsolatedGrading.course_root = c.IsolatedGrading.course_root = c.CourseDirectory.root
c.Autograde.autograde_preprocessors = [
    StartIsolatedGrading, FeedbackRun, IsolatedGrading, IgnorePattern, ClearMetadataPreprocessor,
    LimitOutput, SaveAutoGrades, AssignLatePenalties, CheckCellMetadata]
# On a JupyterHub, the course's id and the exchange folder that teachers and students share (the same
# two lines go into /etc/jupyter/nbgrader_config.py on the students' image):
# c.CourseDirectory.course_id = "attention"
# c.Exchange.root = "/srv/nbgrader/exchange"
