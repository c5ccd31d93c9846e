// DOM building without innerHTML: every piece of text becomes a text node, so model output and
// file contents can never turn into markup.

/**
 * Create an element. Attributes starting with "on" add listeners; `class` sets the class name;
 * `hidden`/`disabled` are booleans; anything else is set as an attribute (null/false skipped).
 * @param {string} tag
 * @param {Record<string, any> | null} [attrs]
 * @param {...(Child | Child[])} children
 * @returns {HTMLElement}
 */
export function h(tag, attrs, ...children) {
  const el = document.createElement(tag);
  for (const [key, value] of Object.entries(attrs ?? {})) {
    if (value === null || value === undefined || value === false) continue;
    if (key.startsWith("on") && typeof value === "function") {
      el.addEventListener(key.slice(2).toLowerCase(), value);
    } else if (key === "class") {
      el.className = String(value);
    } else if (key === "hidden" || key === "disabled" || key === "checked") {
      /** @type {any} */ (el)[key] = Boolean(value);
    } else if (key === "value") {
      /** @type {any} */ (el).value = String(value);
    } else {
      el.setAttribute(key, value === true ? "" : String(value));
    }
  }
  append(el, children);
  return el;
}

/**
 * Append children (flattening arrays; strings become text nodes).
 * @param {Node} parent
 * @param {(Child | Child[])[]} children
 */
export function append(parent, children) {
  for (const child of children.flat()) {
    if (child === null || child === undefined || child === false) continue;
    parent.appendChild(typeof child === "string" || typeof child === "number"
      ? document.createTextNode(String(child)) : child);
  }
}

/**
 * Replace all children of `el`.
 * @param {Element} el
 * @param {...(Child | Child[])} children
 */
export function replace(el, ...children) {
  el.replaceChildren();
  append(el, children);
}

/**
 * A button that keeps keyboard users in mind: type=button, an accessible label, optional key.
 * @param {string} label
 * @param {() => void} onClick
 * @param {{cls?: string, key?: string, title?: string, aria?: string}} [opts]
 * @returns {HTMLButtonElement}
 */
export function button(label, onClick, opts = {}) {
  const el = /** @type {HTMLButtonElement} */ (h("button", {
    type: "button",
    class: `ae-btn ${opts.cls ?? ""}`.trim(),
    title: opts.title ?? null,
    "aria-label": opts.aria ?? null,
    "aria-keyshortcuts": opts.key ?? null,
  }, label));
  el.addEventListener("click", () => onClick());
  if (opts.key) el.appendChild(h("kbd", { class: "ae-key", "aria-hidden": "true" }, opts.key));
  return el;
}

/**
 * The first line of a text, trimmed.
 * @param {string | null | undefined} text
 * @returns {string}
 */
export function firstLine(text) {
  return (text ?? "").trim().split("\n", 1)[0] ?? "";
}

/**
 * A short human duration.
 * @param {number | null | undefined} seconds
 * @returns {string}
 */
export function duration(seconds) {
  if (seconds === null || seconds === undefined || !Number.isFinite(seconds)) return "";
  if (seconds < 1) return `${Math.round(seconds * 1000)} ms`;
  if (seconds < 60) return `${seconds.toFixed(1)} s`;
  const m = Math.floor(seconds / 60);
  return `${m} min ${Math.round(seconds - m * 60)} s`;
}

/**
 * Mark a widget root: class, shortcut suppression for JupyterLab's notebook keys.
 * @param {HTMLElement} el
 * @param {string} cls
 */
export function mountRoot(el, cls) {
  el.classList.add("ae-widget", cls);
  // Lumino stops looking for notebook shortcuts (a, b, d d...) at this attribute.
  el.setAttribute("data-lm-suppress-shortcuts", "true");
}

/**
 * Whether a key event comes from a place where typing is expected.
 * @param {Event} event
 * @returns {boolean}
 */
export function isTyping(event) {
  const t = /** @type {HTMLElement | null} */ (event.target);
  if (!t || !t.tagName) return false;
  const tag = t.tagName.toLowerCase();
  if (tag === "textarea" || tag === "select") return true;
  if (tag === "input") {
    const type = /** @type {HTMLInputElement} */ (t).type;
    return !["checkbox", "radio", "button", "submit"].includes(type);
  }
  return t.isContentEditable;
}
