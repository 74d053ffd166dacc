// The course book's figures open at full size: click (or focus and press Enter) a figure drawn by a
// notebook, and it shows at its natural size in an overlay that scrolls; a click or Escape closes it.
(function () {
  "use strict";

  // The words the overlay shows, in the page's language (the Chinese books set <html lang>).
  const WORDS = {
    en: {dialog: "Figure at full size", close: "Click or press Esc to close", enlarge: "Click to enlarge"},
    "zh-CN": {dialog: "原尺寸的图", close: "点击或按 Esc 关闭", enlarge: "点击放大"},
    "zh-TW": {dialog: "原尺寸的圖", close: "點擊或按 Esc 關閉", enlarge: "點擊放大"},
  };
  const words = WORDS[document.documentElement.lang] || WORDS.en;

  function open(img) {
    const overlay = document.createElement("div");
    overlay.className = "course-zoom-overlay";
    overlay.setAttribute("role", "dialog");
    overlay.setAttribute("aria-label", words.dialog);
    overlay.tabIndex = -1;
    const big = document.createElement("img");
    big.src = img.currentSrc || img.src;
    big.alt = img.alt;
    big.width = img.naturalWidth;  // full size: one image pixel per CSS pixel
    const hint = document.createElement("span");
    hint.className = "course-zoom-hint";
    hint.textContent = words.close;
    overlay.append(big, hint);

    function close() {
      overlay.remove();
      document.removeEventListener("keydown", onKey);
      img.focus();
    }
    function onKey(event) {
      if (event.key === "Escape") close();
    }
    overlay.addEventListener("click", close);
    document.addEventListener("keydown", onKey);
    document.body.append(overlay);
    overlay.focus();
  }

  function setUp() {
    const images = document.querySelectorAll("main div.cell_output img, main figure img");
    images.forEach(function (img) {
      img.classList.add("course-zoomable");
      img.tabIndex = 0;
      img.setAttribute("role", "button");
      img.title = words.enlarge;
      img.addEventListener("click", function () { open(img); });
      img.addEventListener("keydown", function (event) {
        if (event.key === "Enter" || event.key === " ") {
          event.preventDefault();
          open(img);
        }
      });
    });
  }

  if (document.readyState === "loading") {
    document.addEventListener("DOMContentLoaded", setUp);
  } else {
    setUp();
  }
})();

// Every control's accessible name contains what it shows (WCAG 2.1, 2.5.3 "Label in Name"): someone
// who speaks to the page says what they see. The theme names some controls with an aria-label that
// differs from their visible text ("Search" on a button that shows "Search Ctrl+K"; "Toggle hidden
// content" on a summary that shows "Show code cell source"): those take their name from their text
// instead. The colour-mode button keeps its label; its icons, whose titles name the current mode, are
// hidden from assistive technology, titles included (the label says what the button does).
(function () {
  "use strict";

  function shownText(element) {
    return (element.innerText || "").replace(/\s+/g, " ").trim();
  }

  function nameByText() {
    document.querySelectorAll("button[aria-label], summary[aria-label], a[aria-label]")
      .forEach(function (control) {
        const shown = shownText(control).toLowerCase();
        const label = control.getAttribute("aria-label").toLowerCase();
        if (shown && !label.includes(shown)) control.removeAttribute("aria-label");
      });
    // Icons are drawn by the theme's icon font (book/_ext/light_pages.py): each is decoration beside
    // a control's label or text, hidden from assistive technology as Font Awesome's script hid them.
    document.querySelectorAll("i.fa, i[class*='fa-']:not([aria-hidden])")
      .forEach(function (icon) { icon.setAttribute("aria-hidden", "true"); });
    document.querySelectorAll(".theme-switch-button svg, .theme-switch-button i")
      .forEach(function (icon) {
        icon.setAttribute("aria-hidden", "true");
        icon.removeAttribute("aria-labelledby");
        icon.removeAttribute("role");
        icon.querySelectorAll("title").forEach(function (title) { title.remove(); });
      });
  }

  // The theme draws its icons (Font Awesome) and some controls from scripts of its own: fix the
  // names once the page has loaded, and again whenever those controls change.
  window.addEventListener("load", function () {
    nameByText();
    const observer = new MutationObserver(function () {
      observer.disconnect();
      nameByText();
      observer.observe(document.body, {childList: true, subtree: true});
    });
    observer.observe(document.body, {childList: true, subtree: true});
  });
})();
