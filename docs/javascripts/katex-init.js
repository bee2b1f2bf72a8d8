// Render the equations that pymdownx.arithmatex (generic mode) leaves as \( … \) and \[ … \] inside
// span.arithmatex / div.arithmatex, on every page load (also after instant navigation).
function renderEquations(root) {
  renderMathInElement(root, {
    delimiters: [
      { left: "\\(", right: "\\)", display: false },
      { left: "\\[", right: "\\]", display: true },
    ],
    throwOnError: false,
  });
}
if (typeof document$ !== "undefined") {
  document$.subscribe(({ body }) => renderEquations(body));
} else {
  document.addEventListener("DOMContentLoaded", () => renderEquations(document.body));
}
