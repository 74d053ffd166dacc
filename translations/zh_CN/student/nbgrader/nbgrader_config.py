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
# On a JupyterHub, the course's id and the exchange folder that teachers and students share (the same
# two lines go into /etc/jupyter/nbgrader_config.py on the students' image):
# c.CourseDirectory.course_id = "attention"
# c.Exchange.root = "/srv/nbgrader/exchange"
