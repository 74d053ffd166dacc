"""The built book, read as a reader reads it: every page of the table of contents in headless Chromium.

For each page: the math is typeset by the book's own (local) MathJax, every image loads and has alt
text (and on chapter pages every figure a notebook drew has a caption), nothing is fetched from outside
the machine, no script fails, and every internal link and anchor resolves. On chapter pages: solutions
start collapsed and open on a click, and the Colab link opens this chapter's notebook. A full-page
screenshot of each page goes to ``_build/screenshots/`` for review.

Needs the ``built_book`` fixture (tests/conftest.py) and a Chromium: ``scripts/install_browser.py``
installs Debian's (``make test`` runs it first) together with the local MathJax. The test skips only
when no Chromium can be found or installed, and never under CI (``CI`` set), where it fails instead.
"""

from __future__ import annotations

import functools
import http.server
import os
import re
import sys
import threading
from pathlib import Path
from urllib.parse import unquote, urldefrag, urlparse

import pytest

yaml = pytest.importorskip("yaml", reason="PyYAML comes with jupyter-book (requirements.txt)")

REPO_ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO_ROOT / "scripts"))
import install_browser  # noqa: E402  (scripts/ is not a package)

pytestmark = pytest.mark.browser

CHROMIUM_ARGS = ["--no-sandbox", "--disable-gpu", "--no-first-run", "--disable-background-networking",
                 "--disable-component-update", "--disable-sync"]
PAGE_TIMEOUT_MS = 60_000
# sphinx-thebe 0.3.1 writes its inline config script twice into every page; the second copy fails to
# redeclare its constants, harmlessly (the first copy defined them). Any other script error counts.
KNOWN_SCRIPT_ERRORS = ("Identifier 'THEBE_JS_URL' has already been declared",)


def toc_pages(toc: Path) -> list[str]:
    """Every document of a Jupyter Book table of contents, in order (``book/intro``, ``chapters/...``)."""
    data = yaml.safe_load(toc.read_text())
    pages = [data["root"]]

    def walk(entries: list[dict]) -> None:
        for entry in entries or []:
            if "file" in entry:
                pages.append(entry["file"])
            for key in ("chapters", "sections", "parts"):
                walk(entry.get(key, []))

    walk(data.get("parts", []))
    walk(data.get("chapters", []))
    return [re.sub(r"\.(md|ipynb)$", "", page) for page in pages]


def _toc() -> Path:
    override = os.environ.get("COURSE_BOOK_TOC")  # the same switch as tests/conftest.py's built_book
    return Path(override).resolve() if override else REPO_ROOT / "book" / "_toc.yml"


PAGES = toc_pages(_toc())
CHAPTER_PAGES = [p for p in PAGES if p.startswith("chapters/")]


# --- fixtures: a Chromium, a local web server, one browser per module ------------------------------

@pytest.fixture(scope="module")
def chromium() -> str:
    """Path of Chromium; installs Debian's when possible (root + apt-get), else skips (fails in CI)."""
    path = install_browser.find_chromium()
    if path is None and install_browser.can_install_chromium():
        path = install_browser.install_chromium(quiet=True)
    if path is None:
        reason = ("no Chromium found and none can be installed here (needs root and apt-get); install "
                  "chromium or set CHROMIUM_PATH, see scripts/install_browser.py")
        if os.environ.get("CI"):
            pytest.fail(reason)
        pytest.skip(reason)
    return path


class _QuietHandler(http.server.SimpleHTTPRequestHandler):
    def log_message(self, format, *args):  # noqa: A002 - the name is the base class's
        pass


@pytest.fixture(scope="module")
def site(built_book: Path):
    """Serve the built HTML on a free port of 127.0.0.1; yields (base URL, html folder)."""
    handler = functools.partial(_QuietHandler, directory=str(built_book))
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}/", built_book
    finally:
        server.shutdown()
        server.server_close()


@pytest.fixture(scope="module")
def browser(chromium: str):
    sync_api = pytest.importorskip("playwright.sync_api", reason="the playwright package is not installed")
    with sync_api.sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=chromium, headless=True, args=CHROMIUM_ARGS)
        yield browser
        browser.close()


@pytest.fixture(scope="module")
def screenshots(built_book: Path) -> Path:
    folder = built_book.parent / "screenshots"
    folder.mkdir(exist_ok=True)
    return folder


class Visit:
    """One page opened in a fresh browser context, with what went wrong while loading it."""

    def __init__(self, browser, base: str, page_name: str):
        self.base = base
        self.context = browser.new_context(viewport={"width": 1280, "height": 900})
        self.page = self.context.new_page()
        self.page.set_default_timeout(PAGE_TIMEOUT_MS)
        self.external: list[str] = []
        self.failed: list[str] = []
        self.script_errors: list[str] = []
        self.context.route("**/*", self._route)
        self.page.on("response", self._response)
        self.page.on("requestfailed", lambda req: self.failed.append(f"{req.url} ({req.failure})"))
        self.page.on("pageerror", lambda err: self.script_errors.append(str(err)))
        self.page.goto(base + page_name + ".html", wait_until="load")
        self.page.evaluate(_WAIT_FOR_MATHJAX)

    def _route(self, route):
        if route.request.url.startswith(self.base):
            route.continue_()
        else:  # the reader may be offline: nothing the page needs may come from elsewhere
            self.external.append(f"{route.request.resource_type} {route.request.url}")
            route.abort()

    def _response(self, response):
        if response.url.startswith(self.base) and response.status >= 400:
            self.failed.append(f"{response.url} (HTTP {response.status})")

    def close(self):
        self.context.close()


_WAIT_FOR_MATHJAX = """async () => {
    if (window.MathJax && MathJax.startup && MathJax.startup.promise) { await MathJax.startup.promise; }
    await Promise.all(Array.from(document.images).map(img => img.complete ? null :
        new Promise(done => { img.addEventListener('load', done); img.addEventListener('error', done); })));
}"""

_PAGE_FACTS = """() => {
    const main = document.querySelector('main') || document.body;
    const clone = main.cloneNode(true);
    clone.querySelectorAll('pre, code, script, style, mjx-container, .highlight').forEach(e => e.remove());
    return {
        text: clone.innerText,
        mathElements: main.querySelectorAll('.math').length,
        typeset: main.querySelectorAll('mjx-container').length,
        mathErrors: Array.from(main.querySelectorAll('mjx-merror')).map(e => e.textContent),
        untypeset: Array.from(main.querySelectorAll('.math')).filter(e => !e.querySelector('mjx-container'))
                       .map(e => e.textContent.slice(0, 80)),
        // "$$x$$" inside a paragraph parses as "$" + inline math + "$": the dollars stay visible.
        strayDollars: Array.from(main.querySelectorAll('.math')).filter(e => {
            const prev = e.previousSibling, next = e.nextSibling;
            return (prev && prev.nodeType === 3 && prev.textContent.endsWith('$')) ||
                   (next && next.nodeType === 3 && next.textContent.startsWith('$'));
        }).map(e => e.textContent.slice(0, 80)),
        images: Array.from(document.images).map(img => ({src: img.getAttribute('src'), alt: img.alt,
                       width: img.naturalWidth, inMain: main.contains(img),
                       caption: ((img.closest('figure') || {}).querySelector
                                 ? (img.closest('figure').querySelector('figcaption') || {}).textContent || ''
                                 : null)})),
        links: Array.from(document.querySelectorAll('a[href]')).map(a => a.href),
    };
}"""


@pytest.fixture(scope="module")
def anchors(built_book: Path):
    """A cache of the ids defined by each built HTML file."""
    cache: dict[Path, set[str]] = {}

    def ids_of(path: Path) -> set[str]:
        if path not in cache:
            text = path.read_text(errors="replace")
            cache[path] = set(re.findall(r'\b(?:id|name)="([^"]+)"', text))
        return cache[path]

    return ids_of


def link_problems(links: list[str], base: str, html: Path, ids_of) -> list[str]:
    """Internal links whose file does not exist, or whose #anchor is not defined in that file."""
    problems = []
    for link in dict.fromkeys(links):
        if not link.startswith(base):
            continue
        url, fragment = urldefrag(link)
        rel = unquote(urlparse(url).path).lstrip("/")
        target = html / rel
        if target.is_dir():
            target = target / "index.html"
        if not target.is_file():
            problems.append(f"broken link: {link} (no file {rel or 'index.html'})")
        elif fragment and target.suffix == ".html" and unquote(fragment) not in ids_of(target):
            problems.append(f"broken anchor: {link} (no id {fragment!r} in {target.relative_to(html)})")
    return problems


# --- the tests -------------------------------------------------------------------------------------

@pytest.mark.parametrize("page_name", PAGES)
def test_page_reads_well(page_name, site, browser, screenshots, anchors):
    base, html = site
    assert (html / f"{page_name}.html").is_file(), f"{page_name}.html is missing from the built book"
    visit = Visit(browser, base, page_name)
    try:
        facts = visit.page.evaluate(_PAGE_FACTS)
        visit.page.screenshot(path=str(screenshots / f"{page_name.replace('/', '__')}.png"), full_page=True)
    finally:
        visit.close()
    problems = []
    # Math: typeset by the local MathJax, no TeX left in the visible text.
    if facts["mathElements"]:
        if not facts["typeset"]:
            problems.append(f"{facts['mathElements']} math elements but no <mjx-container>: MathJax did "
                            "not run (is the local MathJax installed? python scripts/install_browser.py "
                            "--mathjax; and _config.yml's mathjax_path set?)")
        problems += [f"math not typeset: {text!r}" for text in facts["untypeset"][:5]]
    problems += [f"MathJax error: {text!r}" for text in facts["mathErrors"][:5]]
    problems += [f"a '$' left visible next to the math {text!r} (display math $$...$$ needs a blank line "
                 "before it, also inside a list item)" for text in facts["strayDollars"][:5]]
    for raw in ("$$", "\\begin{", "\\frac", "\\("):
        if raw in facts["text"]:
            at = facts["text"].index(raw)
            context = facts["text"][max(0, at - 40):at + 60]
            problems.append(f"raw TeX {raw!r} in the visible text: ...{context!r}")
    # Images: every one loads; every image of the page's content has alt text.
    for img in facts["images"]:
        if img["width"] == 0:
            problems.append(f"image does not load: {img['src']}")
        if img["inMain"] and not img["alt"].strip():
            problems.append(f"image without alt text: {img['src']}")
        if page_name in CHAPTER_PAGES and img["inMain"] and "_images/" in (img["src"] or ""):
            if not (img["caption"] or "").strip():  # a figure the notebook drew: it needs a caption
                problems.append(f"figure without a caption: {img['src']} (alt: {img['alt'][:60]!r})")
    # Nothing from outside, nothing failing, every internal link resolving.
    problems += [f"request to outside the book (fails offline): {url}" for url in visit.external]
    problems += [f"failed to load: {item}" for item in visit.failed]
    problems += [f"script error: {err}" for err in visit.script_errors if err not in KNOWN_SCRIPT_ERRORS]
    problems += link_problems(facts["links"], base, html, anchors)
    assert not problems, f"{page_name}:\n  " + "\n  ".join(problems)


def _exercise_pages() -> list[str]:
    pages = []
    for page in CHAPTER_PAGES:
        source = REPO_ROOT / f"{page}.ipynb"
        if source.exists() and "{solution-start}" in source.read_text():
            pages.append(page)
    return pages


@pytest.mark.parametrize("page_name", _exercise_pages())
def test_solutions_start_collapsed_and_open_on_click(page_name, site, browser):
    base, _ = site
    visit = Visit(browser, base, page_name)
    try:
        solutions = visit.page.locator("div.solution.dropdown")
        count = solutions.count()
        assert count >= 1, f"{page_name}: no collapsible solution found (expected `:class: dropdown`)"
        for i in range(count):
            solution = solutions.nth(i)
            body = solution.locator("section, div.cell").first
            assert body.count() == 1, f"{page_name}: solution {i + 1} has no content"
            assert not body.is_visible(), f"{page_name}: solution {i + 1} is open before any click"
            solution.locator("button.toggle-button").first.click()  # the chevron "Click to show"
            body.wait_for(state="visible", timeout=5_000)
            assert body.is_visible(), f"{page_name}: solution {i + 1} does not open on click"
    finally:
        visit.close()


@pytest.mark.parametrize("page_name", CHAPTER_PAGES)
def test_colab_link_opens_this_notebook(page_name, site, browser):
    config = yaml.safe_load((REPO_ROOT / "_config.yml").read_text())
    repo = config["repository"]["url"].removeprefix("https://github.com/").strip("/")
    branch = config["repository"].get("branch", "main")
    expected = f"https://colab.research.google.com/github/{repo}/blob/{branch}/{page_name}.ipynb"
    assert (REPO_ROOT / f"{page_name}.ipynb").is_file()
    base, _ = site
    visit = Visit(browser, base, page_name)
    try:
        hrefs = visit.page.eval_on_selector_all(
            "a[href*='colab.research.google.com']", "links => links.map(a => a.href)")
    finally:
        visit.close()
    assert hrefs, f"{page_name}: no Colab launch link on the page"
    assert hrefs == [expected] * len(hrefs), f"{page_name}: Colab links {hrefs}, expected {expected}"
