"""The built book, read as a reader reads it: every page of the table of contents in headless Chromium.

For each page: the math is typeset by the book's own (local) MathJax, every image loads and has alt
text (and on chapter pages every figure a notebook drew has a caption), nothing is fetched from outside
the machine, no script fails, every internal link and anchor resolves, and literal tokens such as
``<pad>`` show as written. On chapter pages: every figure's smallest text renders at 9 CSS px or more in
the 672-px column and the figure opens full size on a click, code boxes show their 88 columns without
scrolling, solutions start collapsed and open on a click, and the Colab link opens this chapter's
notebook. On every page no display formula is wider than the column at desktop width. At phone width
(390 px) no page scrolls sideways, and a formula wider than the phone scrolls visibly in its own box.
axe-core (``scripts/install_browser.py`` installs it) finds no violation of the WCAG 2.1 A and AA rules
on any page of the three books.
A full-page screenshot of every page at desktop and at phone width goes to
``_build/screenshots/{desktop,phone}/`` for review, and each figure's measured text size to
``_build/screenshots/figure_text.tsv``.

Needs the ``built_book`` fixture (tests/conftest.py) and a Chromium: ``scripts/install_browser.py``
installs Debian's (``make test`` runs it first) together with the local MathJax. The test skips only
when no Chromium can be found or installed, and never under CI (``CI`` set), where it fails instead.
"""

from __future__ import annotations

import functools
import http.server
import json
import os
import re
import shutil
import sys
import threading
from html import unescape
from pathlib import Path
from urllib.parse import unquote, urldefrag, urlparse

import pytest
from PIL import Image

yaml = pytest.importorskip("yaml", reason="PyYAML comes with jupyter-book (requirements.txt)")

REPO_ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO_ROOT / "scripts"))
import install_browser  # noqa: E402  (scripts/ is not a package)

pytestmark = pytest.mark.browser

CHROMIUM_ARGS = ["--no-sandbox", "--disable-gpu", "--no-first-run", "--disable-background-networking",
                 "--disable-component-update", "--disable-sync"]
PAGE_TIMEOUT_MS = 60_000
DESKTOP = {"width": 1280, "height": 900}
PHONE = {"width": 390, "height": 844}
MIN_TEXT_PX = 9  # utils/plots.py's MIN_TEXT_PX: the smallest text a figure may show
SMALLEST_TEXT_KEY = "Course-Smallest-Text-pt"  # utils/plots.py writes it into every inline figure
# Tokens that MyST would swallow as HTML tags unless written in backticks (or escaped).
LITERAL_TOKENS = ("<pad>", "<BOS>", "<EOS>", "<bos>", "<eos>", "<unk>", "<UNK>")
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
def axe_script() -> str | None:
    """axe-core's script (scripts/install_browser.py installs it), or None where it cannot be had."""
    if not install_browser.axe_installed() and shutil.which("npm"):
        install_browser.install_axe(quiet=True)
    return install_browser.AXE_SCRIPT.read_text(encoding="utf-8") if install_browser.axe_installed() else None


@pytest.fixture(scope="module")
def screenshots(built_book: Path) -> Path:
    """The screenshots folder, emptied once per test run (under xdist, by whichever worker comes first)."""
    from filelock import FileLock

    from tests.conftest import test_run_id

    folder = built_book.parent / "screenshots"
    marker = built_book.parent / ".screenshots_run"
    with FileLock(str(built_book.parent / ".screenshots.lock")):
        if not marker.is_file() or marker.read_text() != test_run_id():
            shutil.rmtree(folder, ignore_errors=True)  # no picture of a page this run did not take
            for width in ("desktop", "phone"):
                (folder / width).mkdir(parents=True, exist_ok=True)
            (folder / "figure_text.tsv").write_text(
                "page\twidth\tfigure\timage\tsmallest text\tdpi\tscale\tshown\n")
            marker.write_text(test_run_id())
    return folder


class Visit:
    """One page opened in a fresh browser context, with what went wrong while loading it."""

    def __init__(self, browser, base: str, page_name: str, viewport: dict | None = None):
        self.base = base
        self.context = browser.new_context(viewport=viewport or DESKTOP)
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


# What a reader's first view downloads (issue 26, item 7): the decoded size of the page and of every
# resource it loaded, once MathJax has typeset and the fonts it asked for have arrived (the list of
# resources no longer grows), before anything scrolls. Read in the visits the page tests make anyway.
MAX_FIRST_VIEW_BYTES = 2_500_000  # 2.5 MB, decoded, for any chapter page of the three books
_FIRST_VIEW = """async () => {
    await document.fonts.ready;
    let entries = [], count = -1;
    for (let i = 0; i < 20 && entries.length !== count; i++) {
        count = entries.length;
        await new Promise(done => setTimeout(done, 100));
        entries = performance.getEntriesByType('resource');
    }
    const page = performance.getEntriesByType('navigation')[0];
    return [{url: location.href, bytes: page.decodedBodySize}]
        .concat(entries.map(e => ({url: e.name, bytes: e.decodedBodySize})));
}"""


def weight_problem(resources: list[dict], base: str, where: str, top: int = 15) -> str | None:
    """None when the first view is light enough, else what it loaded, largest first."""
    total = sum(r["bytes"] for r in resources)
    if total <= MAX_FIRST_VIEW_BYTES:
        return None
    ordered = sorted(resources, key=lambda r: -r["bytes"])
    lines = [f"{r['bytes'] / 1000:9.1f} KB  {r['url'].removeprefix(base).split('?')[0]}"
             for r in ordered[:top]]
    if len(ordered) > top:
        lines.append(f"{sum(r['bytes'] for r in ordered[top:]) / 1000:9.1f} KB  ({len(ordered) - top} more)")
    return (f"{where}: the first view loads {total / 1e6:.2f} MB decoded ({len(resources)} responses), "
            f"more than {MAX_FIRST_VIEW_BYTES / 1e6:.1f} MB:\n  " + "\n  ".join(lines))


# axe-core's WCAG 2.1 A and AA rules on the page as loaded; each violation with the elements it found.
_AXE_RUN = """async (contrast) => {
    const result = await axe.run(document, {runOnly: {type: 'tag',
        values: ['wcag2a', 'wcag2aa', 'wcag21a', 'wcag21aa']},
        rules: {'color-contrast': {enabled: contrast}}});
    return result.violations.map(v => ({id: v.id, impact: v.impact, help: v.help, count: v.nodes.length,
                                        nodes: v.nodes.slice(0, 3).map(n => n.target.join(' '))}));
}"""


def run_axe(page, script: str | None, contrast: bool = True) -> list[dict] | None:
    """axe-core's violations on the page (``None`` when axe-core is not installed). ``contrast=False``
    leaves out the colour-contrast rule, 40% of axe's time on a chapter page: the Chinese books use the
    English book's stylesheets unchanged, whose contrast the English pages' audit measures."""
    if script is None:
        return None
    page.add_script_tag(content=script)
    return page.evaluate(_AXE_RUN, contrast)


def axe_problems(violations: list[dict]) -> list[str]:
    return [f"{v['id']} ({v['impact']}, {v['count']} elements, e.g. {v['nodes']}): {v['help']}"
            for v in violations]


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
def test_page_reads_well(page_name, site, desktop_visit, anchors):
    base, html = site
    assert (html / f"{page_name}.html").is_file(), f"{page_name}.html is missing from the built book"
    visit = desktop_visit(page_name)
    facts, shown_text = visit["facts"], visit["shown_text"]
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
    problems += [f"request to outside the book (fails offline): {url}" for url in visit["external"]]
    problems += [f"failed to load: {item}" for item in visit["failed"]]
    problems += [f"script error: {err}" for err in visit["script_errors"] if err not in KNOWN_SCRIPT_ERRORS]
    problems += link_problems(facts["links"], base, html, anchors)
    # Literal tokens written in the source show on the page (a bare <pad> is swallowed as HTML).
    problems += [f"the token {token} is written in the source but missing from the page (write it in "
                 "backticks)" for token in _literal_tokens(page_name) if token not in shown_text]
    assert not problems, f"{page_name}:\n  " + "\n  ".join(problems)


def _png_name(page_name: str) -> str:
    return f"{page_name.replace('/', '__')}.png"


def _literal_tokens(page_name: str) -> list[str]:
    """The LITERAL_TOKENS that a page's source (Markdown, or a notebook's Markdown cells) contains."""
    for suffix in (".md", ".ipynb"):
        source = REPO_ROOT / f"{page_name}{suffix}"
        if source.is_file():
            text = source.read_text()
            if suffix == ".ipynb":
                cells = json.loads(text)["cells"]
                text = "\n".join("".join(c["source"]) for c in cells if c["cell_type"] == "markdown")
            return [token for token in LITERAL_TOKENS if token in text]
    return []


# Elements reaching past the right edge; boxes that scroll inside themselves (code, math, tables) may.
_SIDEWAYS = """() => {
    const width = document.documentElement.clientWidth;
    const inner = 'pre, .highlight, mjx-container, .MathJax, table, .table-wrapper, .output';
    const wide = Array.from(document.querySelectorAll('main *')).filter(e => {
        const box = e.getBoundingClientRect();
        return box.width > 0 && box.right > width + 1 && !e.closest(inner);
    }).slice(0, 5);
    const name = e => `${e.tagName.toLowerCase()}.${e.className} ${e.getBoundingClientRect().right}`;
    return {scroll: document.documentElement.scrollWidth, width: width, wide: wide.map(name)};
}"""


@pytest.mark.parametrize("page_name", PAGES)
def test_page_fits_a_phone(page_name, site, desktop_visit, screenshots):
    """At 390 px nothing makes the page scroll sideways (code boxes scroll inside themselves).

    Measured in the shared visit, with the viewport narrowed to a phone's after the desktop
    measurements (the layout follows CSS media queries, so a reload would show the same page)."""
    base, html = site
    phone = desktop_visit(page_name)["phone"]
    overflow, wide_math = phone["overflow"], phone["wide_math"]
    # On a phone figures shrink further; the reader taps one to see it full size. Reported, not failed.
    _report_figures(screenshots, html, page_name, "phone", phone["figures"])
    assert overflow["scroll"] <= overflow["width"] + 1, (
        f"{page_name}: at {PHONE['width']} px the page is {overflow['scroll']} px wide and scrolls "
        f"sideways; widest elements: {overflow['wide']}")
    # A formula wider than a phone scrolls inside its own box, with a shadow that says there is more.
    hidden = [f"{f['tex']!r}... ({f['width']} px in {f['room']} px): overflow-x {f['overflow']}"
              + ("" if f["cue"] else ", no scroll shadow")
              for f in wide_math if f["overflow"] not in ("auto", "scroll") or not f["cue"]]
    assert not hidden, (f"{page_name}: at {PHONE['width']} px these formulas do not scroll visibly in "
                        "their box (course_book.css, div.math):\n  " + "\n  ".join(hidden))


_FIGURES = """() => Array.from(document.querySelectorAll('main div.cell_output img, main figure img'))
    .filter(img => (img.getAttribute('src') || '').includes('_images/'))
    .map(img => ({src: img.getAttribute('src'), natural: img.naturalWidth,
                  shown: img.getBoundingClientRect().width, alt: img.alt}))"""


def figure_text_px(html: Path, page_name: str, figure: dict) -> tuple[float | None, str]:
    """(CSS px of the smallest text of a figure as shown, what was measured) from its PNG and box."""
    path = (html / page_name).parent / figure["src"]
    with Image.open(path) as image:
        points = image.text.get(SMALLEST_TEXT_KEY) if hasattr(image, "text") else None
        dpi = float(image.info.get("dpi", (100, 100))[0])
    if points is None:
        return None, f"{figure['src']}: no {SMALLEST_TEXT_KEY} in the PNG"
    scale = figure["shown"] / figure["natural"] if figure["natural"] else 0.0
    px = float(points) * dpi / 72 * scale
    return px, f"{figure['src']}\t{float(points):.1f} pt\t{dpi:.0f} dpi\tscale {scale:.2f}\t{px:.1f} px"


# Display formulas wider than their box: how the box treats the overflow, and whether it shows it.
_WIDE_MATH = """() => Array.from(document.querySelectorAll('main mjx-container[display="true"]')).map(m => {
    const box = m.closest('div.math') || m.parentElement;
    const style = getComputedStyle(box);
    return {width: m.scrollWidth, room: box.clientWidth, overflow: style.overflowX,
            cue: style.backgroundImage !== 'none', tex: (box.textContent || '').trim().slice(0, 60)};
}).filter(formula => formula.width > formula.room + 1)"""


_CODE_BOXES = """() => Array.from(document.querySelectorAll('main div.cell_input pre'))
    .map(pre => ({client: pre.clientWidth, scroll: pre.scrollWidth,
                  longest: Math.max(...pre.textContent.split('\\n').map(line => line.length)),
                  first: pre.textContent.split('\\n')[0].slice(0, 60)}))"""


_SOLUTION_TOGGLES = "div.solution.dropdown"


def _open_solutions(page) -> list[dict]:
    """Click each collapsed solution open, in order: was it closed before, did it open?"""
    solutions = page.locator(_SOLUTION_TOGGLES)
    found = []
    for i in range(solutions.count()):
        solution = solutions.nth(i)
        body = solution.locator("section, div.cell").first
        record = {"has_body": body.count() == 1, "closed_before": False, "opens": False}
        if record["has_body"]:
            record["closed_before"] = not body.is_visible()
            solution.locator("button.toggle-button").first.click()  # the chevron "Click to show"
            try:
                body.wait_for(state="visible", timeout=5_000)
            except Exception:  # noqa: BLE001 - playwright's TimeoutError: recorded, judged by the test
                pass
            record["opens"] = body.is_visible()
        found.append(record)
    return found


def _measure_at_phone_width(page, screenshots: Path, page_name: str) -> dict:
    """The page narrowed to a phone's width: sideways overflow, figures, wide formulas, a screenshot;
    then back to desktop width."""
    page.set_viewport_size(PHONE)
    page.evaluate("() => new Promise(done => requestAnimationFrame(() => requestAnimationFrame(done)))")
    measured = {"overflow": page.evaluate(_SIDEWAYS), "figures": page.evaluate(_FIGURES),
                "wide_math": page.evaluate(_WIDE_MATH)}
    page.screenshot(path=str(screenshots / "phone" / _png_name(page_name)), full_page=True)
    page.set_viewport_size(DESKTOP)
    return measured


def _visit_at_desktop_width(browser, base: str, page_name: str, screenshots: Path, axe: str | None) -> dict:
    """Everything the page tests read from one page, in one visit: the page's facts and text, its
    figures, code boxes and display math as laid out, a full-page screenshot and axe-core's findings
    (solutions still collapsed), the same at a phone's width, then each solution opened by a click."""
    visit = Visit(browser, base, page_name)
    try:
        record = {"facts": visit.page.evaluate(_PAGE_FACTS),
                  "shown_text": visit.page.evaluate(
                      "() => (document.querySelector('main') || document.body).innerText"),
                  "figures": visit.page.evaluate(_FIGURES),
                  "code_boxes": visit.page.evaluate(_CODE_BOXES),
                  "wide_math": visit.page.evaluate(_WIDE_MATH),
                  "first_view": visit.page.evaluate(_FIRST_VIEW)}  # before a screenshot scrolls
        visit.page.screenshot(path=str(screenshots / "desktop" / _png_name(page_name)), full_page=True)
        record["axe"] = run_axe(visit.page, axe)
        record["phone"] = _measure_at_phone_width(visit.page, screenshots, page_name)
        record["solutions"] = _open_solutions(visit.page) if page_name in _exercise_pages() else []
    finally:
        visit.close()
    record.update(external=visit.external, failed=visit.failed, script_errors=visit.script_errors)
    return record


@pytest.fixture(scope="module")
def desktop_visit(site, browser, screenshots, axe_script):
    """page name -> what one visit at desktop width measured (``_visit_at_desktop_width``).

    Eight tests read each page (seven at desktop width, one at a phone's); a page is loaded once per
    test run for all of them, also across xdist workers: the first worker to need it visits it and
    leaves the record in a JSON file under a file lock, and the others read that file."""
    from filelock import FileLock

    from tests.conftest import test_run_id

    base, html = site
    folder = html.parent / "browser_visits"
    folder.mkdir(exist_ok=True)

    def visit(page_name: str) -> dict:
        path = folder / f"{_png_name(page_name)}.json"
        with FileLock(str(path) + ".lock"):
            if path.is_file():
                saved = json.loads(path.read_text())
                if saved.get("run") == test_run_id():
                    return saved["record"]
            record = _visit_at_desktop_width(browser, base, page_name, screenshots, axe_script)
            path.write_text(json.dumps({"run": test_run_id(), "record": record}))
        return record

    return visit


def _report_figures(screenshots: Path, html: Path, page_name: str, width: str, figures: list[dict]) -> list:
    """Append each figure's measured text size to figure_text.tsv; return (number, figure, px, row)."""
    measured = []
    for number, figure in enumerate(figures, start=1):
        px, row = figure_text_px(html, page_name, figure)
        measured.append((number, figure, px, row))
    with (screenshots / "figure_text.tsv").open("a") as report:
        report.writelines(f"{page_name}\t{width}\tfigure {n}\t{row}\n" for n, _, _, row in measured)
    return measured


@pytest.mark.parametrize("page_name", CHAPTER_PAGES)
def test_figures_are_readable(page_name, site, desktop_visit, screenshots):
    """Every figure's smallest text, at its drawn size times the scale it is shown at, is >= 9 px."""
    _, html = site
    figures = desktop_visit(page_name)["figures"]
    problems = []
    for number, figure, px, row in _report_figures(screenshots, html, page_name, "desktop", figures):
        if px is None:
            problems.append(f"figure {number} ({figure['alt'][:50]!r}): {row}; draw it with "
                            "utils.plots imported (it records the text size of inline figures)")
        elif px < MIN_TEXT_PX:
            problems.append(f"figure {number} ({figure['alt'][:50]!r}): its smallest text shows at "
                            f"{px:.1f} px, below {MIN_TEXT_PX} ({row}); draw it narrower (at most "
                            "8 in) or with larger text (at least 9 pt)")
    assert not problems, f"{page_name}:\n  " + "\n  ".join(problems)


@pytest.mark.parametrize("page_name", CHAPTER_PAGES)
def test_code_boxes_show_88_columns(page_name, desktop_visit):
    boxes = desktop_visit(page_name)["code_boxes"]
    assert boxes, f"{page_name}: no code cells found"
    wide = [f"{box['first']!r}... (longest line {box['longest']} columns, {box['scroll']} px in a "
            f"{box['client']} px box)" for box in boxes if box["scroll"] > box["client"] + 1]
    assert not wide, f"{page_name}: code boxes that scroll sideways:\n  " + "\n  ".join(wide)


@pytest.mark.parametrize("page_name", PAGES)
def test_display_math_fits_the_column(page_name, desktop_visit):
    """At desktop width no display formula is wider than the text column: a long one is broken into
    aligned lines (``\\begin{aligned}``), so that nobody has to scroll to read it."""
    wide = [f"{f['tex']!r}... is {f['width']} px wide in a {f['room']} px column"
            for f in desktop_visit(page_name)["wide_math"]]
    assert not wide, (f"{page_name}: display math wider than the column at {DESKTOP['width']} px "
                      "(break it into aligned lines):\n  " + "\n  ".join(wide))


def _no_axe() -> None:
    reason = ("axe-core is not installed (python scripts/install_browser.py fetches it from the npm "
              "registry; it needs npm)")
    if os.environ.get("CI"):
        pytest.fail(reason)
    pytest.skip(reason)


@pytest.mark.parametrize("page_name", CHAPTER_PAGES)
def test_first_view_is_light(page_name, site, desktop_visit):
    """A chapter's first view downloads at most 2.5 MB decoded (views included), over HTTP; the
    Chinese pages are weighed in their own visit (test_translated_page_reads_well)."""
    base, _ = site
    problem = weight_problem(desktop_visit(page_name)["first_view"], base, page_name)
    assert problem is None, problem


@pytest.mark.parametrize("page_name", PAGES)
def test_page_meets_wcag_2_1_aa(page_name, desktop_visit):
    """axe-core finds no violation of the WCAG 2.1 A and AA rules on the page as a reader loads it."""
    violations = desktop_visit(page_name)["axe"]
    if violations is None:
        _no_axe()
    assert not violations, f"{page_name}: accessibility (axe-core, WCAG 2.1 AA):\n  " + "\n  ".join(
        axe_problems(violations))


def test_a_figure_opens_full_size_on_click(site, browser):
    base, _ = site
    page_name = next(p for p in CHAPTER_PAGES if "/08_" in p)  # a page with large multi-panel maps
    visit = Visit(browser, base, page_name)
    try:
        figures = visit.page.locator("main div.cell_output img.course-zoomable")
        assert figures.count() >= 1, f"{page_name}: no figure is marked zoomable (course_book.js)"
        widest = max(range(figures.count()), key=lambda i: figures.nth(i).evaluate("i => i.naturalWidth"))
        figure = figures.nth(widest)
        figure.scroll_into_view_if_needed()
        figure.click()
        big = visit.page.locator(".course-zoom-overlay img")
        big.wait_for(state="visible", timeout=5_000)
        natural = figure.evaluate("i => i.naturalWidth")
        shown = big.evaluate("i => i.getBoundingClientRect().width")
        assert abs(shown - natural) <= 2, f"the enlarged figure is {shown} px wide, its PNG {natural} px"
        visit.page.keyboard.press("Escape")
        big.wait_for(state="detached", timeout=5_000)
    finally:
        visit.close()


@functools.cache
def _exercise_pages() -> tuple[str, ...]:
    pages = []
    for page in CHAPTER_PAGES:
        source = REPO_ROOT / f"{page}.ipynb"
        if source.exists() and "{solution-start}" in source.read_text():
            pages.append(page)
    return tuple(pages)


@pytest.mark.parametrize("page_name", _exercise_pages())
def test_solutions_start_collapsed_and_open_on_click(page_name, desktop_visit):
    solutions = desktop_visit(page_name)["solutions"]
    assert solutions, f"{page_name}: no collapsible solution found (expected `:class: dropdown`)"
    problems = []
    for i, solution in enumerate(solutions, start=1):
        if not solution["has_body"]:
            problems.append(f"solution {i} has no content")
        elif not solution["closed_before"]:
            problems.append(f"solution {i} is open before any click")
        elif not solution["opens"]:
            problems.append(f"solution {i} does not open on click")
    assert not problems, f"{page_name}:\n  " + "\n  ".join(problems)


@pytest.mark.parametrize("page_name", CHAPTER_PAGES)
def test_colab_link_opens_this_notebook(page_name, built_book):
    """The launch button's Colab link opens this chapter's notebook on the course's branch. The theme
    writes the link into the HTML (no script changes it), so the page file is read, not loaded."""
    config = yaml.safe_load((REPO_ROOT / "_config.yml").read_text())
    repo = config["repository"]["url"].removeprefix("https://github.com/").strip("/")
    branch = config["repository"].get("branch", "main")
    expected = f"https://colab.research.google.com/github/{repo}/blob/{branch}/{page_name}.ipynb"
    assert (REPO_ROOT / f"{page_name}.ipynb").is_file()
    page = (built_book / f"{page_name}.html").read_text(encoding="utf-8")
    hrefs = [unescape(href) for href in re.findall(r'href="([^"]*colab\.research\.google\.com[^"]*)"', page)]
    assert hrefs, f"{page_name}: no Colab launch link on the page"
    assert hrefs == [expected] * len(hrefs), f"{page_name}: Colab links {hrefs}, expected {expected}"


# --- the Chinese books -----------------------------------------------------------------------------
LANGUAGES = {"zh_CN": "zh-CN", "zh_TW": "zh-TW"}

# Paragraphs of the page's own text (not code, outputs, math or the glossary's headwords) in which the
# English is left: five Latin words or more and not one Chinese character.
_UNTRANSLATED = """() => {
    const main = document.querySelector('main') || document.body;
    const skip = 'pre, code, .highlight, .cell_output, .output, mjx-container, script, style, dt, nav';
    return Array.from(main.querySelectorAll('p, li, figcaption, h1, h2, h3, th, td, .admonition-title'))
        .filter(e => !e.closest(skip) && !e.querySelector('p, li'))
        .map(e => { const c = e.cloneNode(true);
                    c.querySelectorAll('code, mjx-container, .math').forEach(x => x.remove());
                    return c.innerText.trim(); })
        .filter(t => (t.match(/[A-Za-z]{2,}/g) || []).length >= 5 && !/[\\u4e00-\\u9fff]/.test(t));
}"""


def _is_reference_entry(text: str) -> bool:
    """A bibliographic entry of the references page, rightly left as written (authors, year, title)."""
    return re.match(r"^[^.]{1,200}?\((?:19|20)\d\d|^.{1,120}\. \(\d{4}|^[A-Z][^()]{1,150}\. \*?[A-Z]", text) \
        is not None


@pytest.mark.parametrize("language", list(LANGUAGES))
@pytest.mark.parametrize("page_name", PAGES)
def test_translated_page_reads_well(language, page_name, site, browser, screenshots, anchors, axe_script):
    """Each page of each Chinese book: its language declared, math typeset, figures shown, nothing
    left in English but code, outputs and figure labels, and a switcher that leads to the same page in
    English."""
    base, html = site
    if not (html / language).is_dir():
        pytest.skip(f"no {language} book (the Chinese books are built with the book's own toc only)")
    visit = Visit(browser, base, f"{language}/{page_name}")
    try:
        lang = visit.page.evaluate("() => document.documentElement.lang")
        first_view = visit.page.evaluate(_FIRST_VIEW) if page_name in CHAPTER_PAGES else []
        facts = visit.page.evaluate(_PAGE_FACTS)
        untranslated = visit.page.evaluate(_UNTRANSLATED)
        wide_math = visit.page.evaluate(_WIDE_MATH)
        violations = run_axe(visit.page, axe_script, contrast=False)  # measured on the English page
        switcher = visit.page.evaluate(
            "() => Array.from(document.querySelectorAll('nav.course-languages a')).map(a => a.href)")
        folder = screenshots / f"desktop_{language}"
        folder.mkdir(exist_ok=True)
        # the whole page in simplified Chinese; the traditional one's first screen (the same layout)
        visit.page.screenshot(path=str(folder / _png_name(page_name)), full_page=language == "zh_CN")
    finally:
        visit.close()
    problems = []
    if lang != LANGUAGES[language]:
        problems.append(f"<html lang={lang!r}>, expected {LANGUAGES[language]!r}")
    if facts["mathElements"] and not facts["typeset"]:
        problems.append("the math is not typeset (MathJax did not run)")
    problems += [f"math not typeset: {text!r}" for text in facts["untypeset"][:5]]
    problems += [f"MathJax error: {text!r}" for text in facts["mathErrors"][:5]]
    problems += [f"display math wider than the column: {f['tex']!r}... ({f['width']} px in {f['room']} px)"
                 for f in wide_math]
    problems += [f"image does not load: {img['src']}" for img in facts["images"] if img["width"] == 0]
    problems += [f"request to outside the book (fails offline): {url}" for url in visit.external]
    problems += [f"failed to load: {item}" for item in visit.failed]
    problems += link_problems(facts["links"], base, html, anchors)
    problems += [f"accessibility: {problem}" for problem in axe_problems(violations or [])]
    if (heavy := weight_problem(first_view, base, "this page")) is not None:
        problems.append(heavy)
    if page_name == "book/references":
        untranslated = [text for text in untranslated if not _is_reference_entry(text)]
    problems += [f"left in English: {text[:90]!r}" for text in untranslated[:8]]
    others = {f"{base}{page_name}.html"} | {f"{base}{code}/{page_name}.html" for code in LANGUAGES} - \
        {f"{base}{language}/{page_name}.html"}
    if set(switcher) != others:
        problems.append(f"the language switcher links to {switcher}, not to this page in the other "
                        f"languages {sorted(others)}")
    assert not problems, f"{language}/{page_name}:\n  " + "\n  ".join(problems)


def test_language_switcher_leads_round_the_languages(site, browser):
    """English -> 简体中文 -> 繁體中文 -> English by clicking, landing on the same page each time."""
    base, html = site
    if not (html / "zh_CN").is_dir():
        pytest.skip("no Chinese books (built with the book's own toc only)")
    page_name = next(p for p in CHAPTER_PAGES if "/05_" in p)
    visit = Visit(browser, base, page_name)
    try:
        for code, lang in (("zh_CN", "zh-CN"), ("zh_TW", "zh-TW"), ("en", "en")):
            visit.page.locator(f"nav.course-languages a[hreflang='{lang}']").click()
            visit.page.wait_for_load_state("load")
            folder = "" if code == "en" else f"{code}/"
            assert visit.page.url == f"{base}{folder}{page_name}.html", f"landed on {visit.page.url}"
            assert visit.page.evaluate("() => document.documentElement.lang") == lang
    finally:
        visit.close()


# --- the interactive attention views (utils/views.py) ----------------------------------------------

VIEW_PAGE = "chapters/08_transformer_decoder"
_VIEW_DATA = """() => Array.from(document.querySelectorAll('div.course-attn')).map(root => ({
    id: root.id, ready: root.classList.contains('course-attn-ready'),
    data: JSON.parse(root.querySelector('script.course-attn-data').textContent)}))"""
_VIEW_WORDS = {"": ("Head view", "masked"), "zh_CN/": ("头视图", "被遮住"), "zh_TW/": ("頭檢視", "被遮住")}


def _shown_key_weights(view) -> list[str]:
    return view.locator(".course-attn-w[data-side=k]").evaluate_all("nodes => nodes.map(n => n.textContent)")


@pytest.mark.parametrize("width", ["desktop", "phone"])
@pytest.mark.parametrize("book", list(_VIEW_WORDS))
def test_attention_view_shows_the_models_weights(book, width, site, browser):
    """Chapter 8's view of the trained Transformer, in each book at desktop and phone width: hovering
    query i in layer l, head h shows the weights the notebook embedded (which the notebook checks are
    the model's to 5e-4) to 1e-3; the decoder's future keys read "masked"; every token is reached by
    Tab and the arrow keys; no request leaves the page and no script fails."""
    base, html = site
    if book and not (html / book).is_dir():
        pytest.skip(f"no {book} book")
    visit = Visit(browser, base, book + VIEW_PAGE, viewport=DESKTOP if width == "desktop" else PHONE)
    console = []
    visit.page.on("console", lambda msg: console.append(msg.text) if msg.type == "error" else None)
    try:
        page = visit.page
        views = page.evaluate(_VIEW_DATA)
        assert views and all(v["ready"] for v in views), f"views on the page: {[v['id'] for v in views]}"
        found = [v for v in views if [m["kind"] for m in v["data"]["examples"][0]["maps"]]
                 == ["encoder", "decoder_self", "cross"]]
        assert found, "no encoder-decoder view on chapter 8's page"
        root_id, data = found[0]["id"], found[0]["data"]
        assert len(data["examples"]) >= 5, "the sentence picker offers at least 5 sentences"
        view = page.locator(f"#{root_id}")
        head_label, masked = _VIEW_WORDS[book]
        assert view.locator(".course-attn-tab").first.text_content() == head_label
        selects = view.locator("select")
        example = len(data["examples"]) - 1  # the failure
        selects.nth(0).select_option(index=example)  # an index: the layers' labels are numbers too
        maps = data["examples"][example]["maps"]
        for kind_index, maps_of_kind in enumerate(maps):
            selects.nth(1).select_option(index=kind_index)
            layers, heads = len(maps_of_kind["weights"]), len(maps_of_kind["weights"][0])
            layer, head = layers - 1, heads - 1
            selects.nth(2).select_option(index=layer)
            view.locator(f".course-attn-head[data-head='{head}']").click(modifiers=["Shift"])
            assert view.locator(".course-attn-head[aria-pressed=true]").count() == 1
            i = len(maps_of_kind["queries"]) // 2
            view.locator(".course-attn-token.course-attn-q").nth(i).hover()
            shown = _shown_key_weights(view)
            want = maps_of_kind["weights"][layer][head][i]
            for j, (text, thousandths) in enumerate(zip(shown, want, strict=True)):
                if maps_of_kind["causal"] and j > i:
                    assert text == masked, f"{maps_of_kind['kind']}: key {j} after query {i} shows {text!r}"
                else:
                    assert abs(float(text) - thousandths / 1000) <= 1e-3, (
                        f"{maps_of_kind['kind']} layer {layer} head {head} query {i} key {j}: the page "
                        f"shows {text}, the model's weight is {thousandths / 1000}")
        # keyboard: Tab from the first query reaches the next; the arrow keys walk every token
        queries = view.locator(".course-attn-token.course-attn-q")
        keys = view.locator(".course-attn-token.course-attn-k")
        queries.first.focus()
        page.keyboard.press("Tab")
        assert page.evaluate("() => document.activeElement.getAttribute('data-index')") == "1"
        queries.first.focus()
        reached = set()
        for _ in range(queries.count()):
            reached.add(page.evaluate("() => 'q' + document.activeElement.getAttribute('data-index')"))
            page.keyboard.press("ArrowDown")
        page.keyboard.press("ArrowRight")  # from a query across to the keys
        assert page.evaluate("() => document.activeElement.getAttribute('data-side')") == "k"
        keys.first.focus()
        for _ in range(keys.count()):
            reached.add(page.evaluate("() => 'k' + document.activeElement.getAttribute('data-index')"))
            page.keyboard.press("ArrowDown")
        assert len(reached) == queries.count() + keys.count(), f"the keyboard reached {sorted(reached)}"
        assert view.locator(".course-attn-status").text_content().strip(), "no text for screen readers"
        # the model view: a map per layer and head
        view.locator(".course-attn-tab").nth(1).click()
        assert view.locator(".course-attn-thumb").count() == layers * heads
        overflow = page.evaluate(_SIDEWAYS)
    finally:
        visit.close()
    assert not visit.external, f"requests to outside the book: {visit.external}"
    assert not visit.failed, f"failed to load: {visit.failed}"
    errors = [err for err in visit.script_errors + console
              if not any(known in err for known in KNOWN_SCRIPT_ERRORS)]
    assert not errors, f"script errors: {errors}"
    assert overflow["scroll"] <= overflow["width"] + 1, (
        f"at {width} width the page scrolls sideways: {overflow['wide']}")


# --- the lecture decks (classroom/slides.py; issue 27, item 1) --------------------------------------
_DECK_READY = """async () => {
    const ready = name => document.documentElement.getAttribute(name) === 'ready';
    for (let i = 0; i < 600 && !(ready('data-deck') && ready('data-math')); i++) {
        await new Promise(done => setTimeout(done, 50));
    }
    await document.fonts.ready;
    return ready('data-deck') && ready('data-math');
}"""
# Every slide at once: reveal.js lays out every slide within its view distance (set past the deck's
# length) and every fragment is shown; then what sticks out of the 1280 x 720 slide, images that did not
# load, math left as TeX, and whether it has speaker notes. Measured in the slide's own pixels (reveal.js
# scales the deck). One pass instead of visiting each slide: about 0.1 s a deck instead of 1 s, and it
# reads a few pixels more, never fewer (checked against slide-by-slide on three decks).
_EVERY_SLIDE = """async () => {
    Reveal.configure({viewDistance: 1000, mobileViewDistance: 1000});
    document.querySelectorAll('.reveal .fragment').forEach(f => f.classList.add('visible'));
    await new Promise(done => requestAnimationFrame(() => requestAnimationFrame(done)));
    const slides = Reveal.getSlides(), out = [];
    const scale = Reveal.getScale();
    const frame = document.querySelector('.reveal .slides').getBoundingClientRect();
    for (const slide of slides) {
        const own = slide.getBoundingClientRect();
        let bottom = 0, right = 0;
        for (const el of slide.querySelectorAll(':scope > *:not(aside)')) {
            const r = el.getBoundingClientRect();
            bottom = Math.max(bottom, (r.bottom - own.top) / scale);
            right = Math.max(right, (r.right - frame.left) / scale);
        }
        const text = slide.cloneNode(true);
        text.querySelectorAll('aside, mjx-container, script').forEach(n => n.remove());
        out.push({
            n: slide.getAttribute('data-slide'), bottom: Math.round(bottom), right: Math.round(right),
            broken: Array.from(slide.querySelectorAll('img')).filter(i => !i.naturalWidth).map(i => i.src),
            tex: /\\\\\\(|\\\\\\[/.test(text.textContent),
            math: slide.querySelectorAll('span.math, div.math').length,
            typeset: slide.querySelectorAll('mjx-container').length,
            notes: (slide.querySelector('aside.notes') || {textContent: ''}).textContent.trim().length,
        });
    }
    return {slides: out, total: Reveal.getTotalSlides(), notes: Reveal.hasPlugin('notes'),
            lang: document.documentElement.lang, width: Reveal.getConfig().width,
            height: Reveal.getConfig().height};
}"""
DECK_LANGUAGES = {"": "en", "zh_CN/": "zh-CN", "zh_TW/": "zh-TW"}


@pytest.mark.parametrize("book", list(DECK_LANGUAGES))
def test_every_deck_opens_and_every_slide_fits(book, site, browser):
    """Each chapter's deck, in each book: it opens from the chapter page's link, every slide renders
    (images loaded, math typeset, nothing sticking out of the 1280 x 720 slide), the speaker notes are
    there, and no request leaves the site, no script fails."""
    base, html = site
    if book and not (html / book).is_dir():
        pytest.skip(f"no {book} book")
    problems = []
    for page_name in CHAPTER_PAGES:
        stem = page_name.split("/", 1)[1]
        deck = html / book / "slides" / f"{stem}.html"
        if not deck.exists():
            problems.append(f"{book}slides/{stem}.html is missing")
            continue
        chapter = (html / book / f"{page_name}.html").read_text(encoding="utf-8")
        if f'href="../slides/{stem}.html"' not in chapter:
            problems.append(f"{book}{page_name}: no link to its deck")
        visit = Visit(browser, base, f"{book}slides/{stem}", viewport=DESKTOP)
        console = []
        visit.page.on("console", lambda msg, c=console: c.append(msg.text) if msg.type == "error" else None)
        try:
            ready = visit.page.evaluate(_DECK_READY)
            found = visit.page.evaluate(_EVERY_SLIDE) if ready else None
        finally:
            visit.close()
        where = f"{book}slides/{stem}"
        if not ready:
            problems.append(f"{where}: the deck or its math never became ready")
            continue
        problems += [f"{where}: {p}" for p in visit.external + visit.failed + visit.script_errors + console]
        assert found["lang"] == DECK_LANGUAGES[book] and found["notes"], (where, found["lang"])
        assert found["total"] == len(found["slides"]) >= 5, f"{where}: {found['total']} slides"
        for s in found["slides"]:
            if s["bottom"] > found["height"] + 2 or s["right"] > found["width"] + 2:
                problems.append(f"{where} slide {s['n']}: its content reaches {s['right']} x "
                                f"{s['bottom']} px, past the {found['width']} x {found['height']} slide")
            if s["broken"]:
                problems.append(f"{where} slide {s['n']}: images did not load: {s['broken']}")
            if s["tex"] or s["typeset"] < s["math"]:
                problems.append(f"{where} slide {s['n']}: math left as TeX ({s['typeset']} of {s['math']})")
        with_notes = sum(1 for s in found["slides"] if s["notes"])
        if with_notes < len(found["slides"]) // 2:
            problems.append(f"{where}: only {with_notes} of {len(found['slides'])} slides have notes")
    if not book:
        problems += _deck_lengths_against_the_guide(html)
    assert not problems, "\n".join(problems)


MAX_DECK_MINUTES = {"chapter": 50, "lab": 25}  # a 50-minute lecture; a lab's deck only introduces it


def _deck_lengths_against_the_guide(html: Path) -> list[str]:
    """Each English deck within one lecture, and the instructor guide's table of the decks (written by
    ``python -m classroom.slides --guide``) within 2 slides and 2 minutes of what the decks measure."""
    from classroom import slides

    problems = []
    guide = (REPO_ROOT / "book" / "instructor_guide.md").read_text(encoding="utf-8")
    rows = {m.group(1): (int(m.group(2)), int(m.group(3))) for m in re.finditer(
        r"^\| \d+\. .*? \| \{slides\}`(\w+)` \| (\d+) \| \d+ \| (\d+) \|$", guide, re.M)}
    for deck in slides.decks_of(html, "en"):
        kind = "lab" if "_lab_" in deck.stem else "chapter"
        count, minutes = len(slides.paginate(deck)), deck.minutes()
        if minutes > MAX_DECK_MINUTES[kind]:
            problems.append(f"slides/{deck.stem}: about {minutes:.0f} minutes, more than one lecture "
                            f"({MAX_DECK_MINUTES[kind]}): mark fewer cells as slides or notes")
        if deck.stem not in rows:
            problems.append(f"the guide's table of decks has no row for {deck.stem}: run "
                            "`python -m classroom.slides --guide`")
        elif abs(rows[deck.stem][0] - count) > 2 or abs(rows[deck.stem][1] - minutes) > 2:
            problems.append(f"the guide says {deck.stem}'s deck has {rows[deck.stem][0]} slides and "
                            f"takes {rows[deck.stem][1]} minutes; it has {count} and takes {minutes:.0f}: "
                            "run `python -m classroom.slides --guide`")
    return problems
