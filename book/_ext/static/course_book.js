// The course book's figures open at full size: click (or focus and press Enter) a figure drawn by a
// notebook, and it shows at its natural size in an overlay that scrolls; a click or Escape closes it.
(function () {
  "use strict";

  function open(img) {
    const overlay = document.createElement("div");
    overlay.className = "course-zoom-overlay";
    overlay.setAttribute("role", "dialog");
    overlay.setAttribute("aria-label", "Figure at full size");
    overlay.tabIndex = -1;
    const big = document.createElement("img");
    big.src = img.currentSrc || img.src;
    big.alt = img.alt;
    big.width = img.naturalWidth;  // full size: one image pixel per CSS pixel
    const hint = document.createElement("span");
    hint.className = "course-zoom-hint";
    hint.textContent = "Click or press Esc to close";
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
      img.title = "Click to enlarge";
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
