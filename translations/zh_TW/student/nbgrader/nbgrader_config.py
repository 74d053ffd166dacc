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
