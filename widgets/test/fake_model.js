// A stand-in for anywidget's model: get/set/on/off/send/save_changes, recording what is sent.

/**
 * @typedef {AnyModel & {sent: any[], state: Record<string, any>}} FakeModel
 */

/**
 * A model holding `initial` traits; set() fires "change:<name>" like Backbone does.
 * @param {Record<string, any>} [initial]
 * @returns {FakeModel}
 */
export function fakeModel(initial = {}) {
  /** @type {Record<string, any>} */
  const state = { ...initial };
  /** @type {Map<string, ((...args: any[]) => void)[]>} */
  const listeners = new Map();
  /** @type {any[]} */
  const sent = [];
  return {
    state,
    sent,
    get: (name) => state[name],
    set(name, value) {
      state[name] = value;
      for (const callback of [...(listeners.get(`change:${name}`) ?? [])]) callback();
    },
    on(event, callback) {
      listeners.set(event, [...(listeners.get(event) ?? []), callback]);
    },
    off(event, callback) {
      if (!event) { listeners.clear(); return; }
      listeners.set(event, (listeners.get(event) ?? []).filter((cb) => callback && cb !== callback));
    },
    send(content) {
      sent.push(content);
    },
    save_changes() {},
  };
}

/**
 * Render a widget into a fresh element attached to the document.
 * @param {{render: (args: RenderArgs) => (void | (() => void))}} widget
 * @param {AnyModel} model
 * @returns {{el: HTMLElement, cleanup: void | (() => void)}}
 */
export function mount(widget, model) {
  document.body.replaceChildren();
  const el = document.createElement("div");
  document.body.appendChild(el);
  const cleanup = widget.render({ model, el });
  return { el, cleanup };
}

/**
 * Press a key on an element (bubbling, cancelable) and say whether something handled it.
 * @param {Element} target @param {string} key @param {KeyboardEventInit} [init]
 * @returns {boolean} true when the event was left alone
 */
export function press(target, key, init = {}) {
  return target.dispatchEvent(new KeyboardEvent("keydown", { key, bubbles: true, cancelable: true, ...init }));
}

/**
 * The button labelled `label` (its text without the shortcut key hint).
 * @param {ParentNode} root @param {string} label
 * @returns {HTMLButtonElement}
 */
export function buttonNamed(root, label) {
  const text = (/** @type {HTMLButtonElement} */ b) => Array.from(b.childNodes)
    .filter((n) => !(n instanceof HTMLElement && n.tagName === "KBD")).map((n) => n.textContent).join("");
  const found = Array.from(root.querySelectorAll("button")).find((b) => text(b) === label);
  if (!found) throw new Error(`no button "${label}"`);
  return found;
}

/**
 * Messages sent other than "ready" and the "alive" beats.
 * @param {{sent: any[]}} model
 * @returns {any[]}
 */
export function decisions(model) {
  return model.sent.filter((m) => m.type !== "ready" && m.type !== "alive");
}
