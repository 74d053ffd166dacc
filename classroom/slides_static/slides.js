/* The course's lecture decks (classroom/slides.py): reveal.js set up for a 16:9 projector, with the
   speaker notes plugin (press S), and MathJax (the book's own copy, loaded after this file) typesetting
   every slide once, after which reveal.js lays the slides out again. */
(function () {
  "use strict";
  window.MathJax = {
    tex: { inlineMath: [["\\(", "\\)"]], displayMath: [["\\[", "\\]"]] },
    startup: {
      pageReady: function () {
        return MathJax.startup.defaultPageReady().then(function () {
          if (window.Reveal && Reveal.isReady()) { Reveal.layout(); }
          document.documentElement.setAttribute("data-math", "ready");
        });
      }
    }
  };
  Reveal.initialize({
    hash: true,
    width: 1280,
    height: 720,
    margin: 0.04,
    center: false,
    transition: "none",
    slideNumber: "c/t",
    plugins: [RevealNotes]
  }).then(function () {
    document.documentElement.setAttribute("data-deck", "ready");
  });
})();
