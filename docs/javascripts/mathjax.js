// MathJax for pymdownx.arithmatex (generic mode), as equinox's documentation sets it up.
window.MathJax = {
  tex: {
    inlineMath: [["\\(", "\\)"]],
    displayMath: [["\\[", "\\]"]],
    processEscapes: true,
    processEnvironments: true
  },
  options: {
    ignoreHtmlClass: ".*|",
    processHtmlClass: "arithmatex"
  }
};

document$ = window.document$;
if (typeof document$ !== "undefined" && document$.subscribe) {
  document$.subscribe(() => { MathJax.typesetPromise(); });
}
