// Keyboard focus between the notebook and a widget that waits for an answer: the widget takes
// focus when it appears (unless the user is typing elsewhere), keys pressed in it never reach
// the notebook's command-mode shortcuts, and once answered the notebook gets focus back on the
// cell after the widget's cell, in command mode, so Shift+Enter runs that cell next.

const SUPPRESS = "data-lm-suppress-shortcuts";

/**
 * Whether the user is typing somewhere outside `el`: a cell editor, a text box, an input.
 * @param {HTMLElement} el
 * @returns {boolean}
 */
export function typingElsewhere(el) {
  const active = /** @type {HTMLElement | null} */ (document.activeElement);
  if (!active || active === document.body || el.contains(active)) return false;
  if (active.closest(".cm-editor, .CodeMirror")) return true;
  const tag = active.tagName.toLowerCase();
  if (tag === "textarea" || tag === "select") return true;
  if (tag === "input") {
    return !["checkbox", "radio", "button", "submit", "reset"].includes(/** @type {HTMLInputElement} */ (active).type);
  }
  return active.isContentEditable;
}

/**
 * Whether `target` takes typed text.
 * @param {Element} target
 * @returns {boolean}
 */
function takesText(target) {
  const tag = target.tagName.toLowerCase();
  if (tag === "textarea") return true;
  if (tag === "input") {
    return !["checkbox", "radio", "button", "submit", "reset"].includes(/** @type {HTMLInputElement} */ (target).type);
  }
  return target instanceof HTMLElement && target.isContentEditable;
}

/**
 * Keys a text box does itself: Enter (a new line), undo and redo.
 * @param {KeyboardEvent} event
 * @returns {boolean}
 */
function textKey(event) {
  const mod = event.ctrlKey || event.metaKey;
  if (event.key === "Enter") return !mod && !event.altKey;
  return mod && ["z", "y"].includes(event.key.toLowerCase());
}

/**
 * Keep the notebook's shortcuts (a, b, d d, Enter, Shift+Enter...) away from keys pressed in
 * `el`. Lumino matches a shortcut from the key's target up and skips targets that carry
 * `data-lm-suppress-shortcuts`; its selectors match any focused node in the notebook, so the
 * attribute must be on the target itself, which a capturing listener on the window (it runs
 * before the application's, in either phase) puts there. The application also cancels the
 * line break of an Enter typed anywhere in a cell, outputs included: Enter, undo and redo in
 * a text box of `el` therefore go no further than the window (the text box still gets them).
 * Returns the function that stops it.
 * @param {HTMLElement} el
 * @returns {() => void}
 */
export function guardShortcuts(el) {
  /** @param {KeyboardEvent} event */
  const mark = (event) => {
    const target = event.target;
    if (!(target instanceof Element) || !el.contains(target)) return;
    if (!target.hasAttribute(SUPPRESS)) target.setAttribute(SUPPRESS, "true");
    if (takesText(target) && textKey(event)) event.stopPropagation();
  };
  // The cancelling happens in a one-off "beforeinput" listener put on the target by an earlier
  // key's keydown (a modifier's, say), so the text box's own input events stop here too.
  /** @param {InputEvent} event */
  const keep = (event) => {
    const target = event.target;
    if (target instanceof Element && el.contains(target) && takesText(target)
        && ["insertLineBreak", "insertParagraph", "historyUndo", "historyRedo"].includes(event.inputType)) {
      event.stopPropagation();
    }
  };
  window.addEventListener("keydown", mark, true);
  window.addEventListener("beforeinput", keep, true);
  return () => {
    window.removeEventListener("keydown", mark, true);
    window.removeEventListener("beforeinput", keep, true);
  };
}

/**
 * Focus `target` once `el` is in the page, unless the user is typing elsewhere by then or
 * `wanted()` says no more.
 * @param {HTMLElement} el @param {() => HTMLElement | null} target @param {() => boolean} wanted
 */
export function focusWhenShown(el, target, wanted) {
  let tries = 0;
  const attempt = () => {
    if (!wanted()) return;
    if (!el.isConnected) {
      if (++tries < 60) setTimeout(attempt, 50);
      return;
    }
    if (!typingElsewhere(el)) target()?.focus();
  };
  setTimeout(attempt, 0);
}

/**
 * Give the notebook focus back in command mode on the cell after the one holding `el`
 * (JupyterLab 4 and Notebook 7 make a cell active on a mouse press outside its editor).
 * False when `el` is in no notebook cell or its cell is the last one.
 * @param {HTMLElement} el
 * @returns {boolean}
 */
export function focusNextCell(el) {
  const cell = el.closest(".jp-Cell");
  let next = cell?.nextElementSibling ?? null;
  while (next && !next.classList.contains("jp-Cell")) next = next.nextElementSibling;
  if (!cell || !next) return false;
  const prompt = next.querySelector(".jp-InputPrompt") ?? next;
  for (const type of ["mousedown", "mouseup", "click"]) {
    prompt.dispatchEvent(new MouseEvent(type, { bubbles: true, cancelable: true }));
  }
  if (!next.contains(document.activeElement)) {
    const notebook = /** @type {HTMLElement | null} */ (cell.closest(".jp-Notebook"));
    /** @type {HTMLElement} */ (next).focus({ preventScroll: true });
    if (!next.contains(document.activeElement)) notebook?.focus({ preventScroll: true });
  }
  return true;
}
