# Two commands for a newcomer (see README.md):
#   make book   build the HTML book, executing every notebook  -> _build/html/index.html, and the
#               Chinese books from the same executed notebooks  -> _build/html/zh_CN/, _build/html/zh_TW/
#               and each notebook's lecture slides beside each book -> _build/html/slides/, .../zh_CN/slides/
#   make test   run the whole test suite (unit tests, every notebook through nbval, the book, a browser)
# Both create and fill .venv when it is missing or older than requirements.txt / pyproject.toml.

PYTHON ?= python3
VENV   := .venv
BIN    := $(VENV)/bin
STAMP  := $(VENV)/.installed

.PHONY: setup book test lint student student-book bench robustness clean

$(STAMP): requirements.txt pyproject.toml
	@test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --disable-pip-version-check -r requirements.txt
	$(BIN)/python -m pip install --quiet --disable-pip-version-check --no-deps -e .
	@# rfc3987-syntax (jupyter-events asks for jsonschema[format-nongpl]) builds some forty Earley
	@# parsers when jsonschema is imported: 2.6 s in every process that reads a notebook (nbgrader,
	@# the book's build, each test's helper). jsonschema checks IRI formats without it; no notebook
	@# schema uses that format.
	$(BIN)/python -m pip uninstall --quiet --disable-pip-version-check --yes rfc3987-syntax
	@touch $(STAMP)

setup: $(STAMP)

# Before building, drop from the execution cache the runs made before utils/ last changed
# (scripts/book_cache.py): jupyter-cache matches notebooks by their code alone.
book: setup
	$(BIN)/python scripts/install_browser.py --mathjax
	COURSE_PLAIN_PROGRESS=1 $(BIN)/python scripts/book_cache.py --execute
	COURSE_PLAIN_PROGRESS=1 $(BIN)/jupyter-book build . --toc book/_toc.yml -W -n --keep-going
	$(BIN)/python scripts/translations.py books
	$(BIN)/python -m classroom.slides

# Three steps. First the book alone, built as a newcomer's `make book` builds it (the threads
# choose_threads() picks on a quiet machine), and the browser test of its pages (what they show, and
# what each chapter's first view weighs): threads that wait for a
# core another process holds slow a run down many times over, so the book is not built beside anything
# (two workers, but one builds while the other waits for the book; then both read its pages).
# Its build trains every chapter's models once and keeps the runs in _build/kept_runs (tests/conftest.py).
# Then everything else: two pytest workers, one thread each (small models run faster on one thread each
# than on two threads fighting over two cores), handed tests as they free up (--dist loadgroup;
# conftest.py keeps a notebook's nbval cells together and starts slow tests first). Every full notebook
# runs there once more, as the reference submission nbgrader autogrades (tests/test_nbgrader.py), and
# every student edition runs top to bottom; both load the book's kept runs instead of training again.
# nbval (`pytest chapters`) is left out (the `tests` argument): the book and the reference run already
# execute every notebook with no cell allowed to raise. Last, the glued numbers of those runs compared.
test: setup
	$(BIN)/python scripts/install_browser.py
	$(BIN)/python -m pytest tests/test_book.py tests/test_browser.py -n 2 --durations=15
	OMP_NUM_THREADS=1 $(BIN)/python -m pytest tests -n 2 --dist loadgroup --durations=25 \
		--ignore=tests/test_book.py --ignore=tests/test_browser.py \
		--ignore=tests/test_glue_runs.py
	$(BIN)/python -m pytest tests/test_glue_runs.py

lint: setup
	$(BIN)/ruff check utils classroom tests scripts chapters

student: setup
	$(BIN)/python -m classroom student --out student

# The student's book: the book in its three languages without the solutions, the open questions'
# answers, the ablation ladder's measured results and the authors' predictions, and the instructor
# guide (book/_ext/student_book.py) -> _build/student_book/html/index.html, .../zh_CN/, .../zh_TW/.
# It renders `make book`'s executed notebooks: with a warm cache nothing is executed.
student-book: setup
	$(BIN)/python scripts/install_browser.py --mathjax
	COURSE_PLAIN_PROGRESS=1 $(BIN)/python scripts/book_cache.py --execute
	$(BIN)/python scripts/student_book.py

bench: setup
	$(BIN)/python scripts/benchmark.py

# Every notebook over 5 seeds and 1, 2 and 4 CPU threads; the report lands in scripts/robustness.md.
robustness: setup
	$(BIN)/python scripts/robustness.py --out scripts/robustness.md

clean:
	rm -rf _build student
