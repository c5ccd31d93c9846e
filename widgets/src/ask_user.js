// A question from the agent to you: options (one or several) and free text. Sends
// {type: "answer", choices, text} once, then shows the answer; {type: "alive"} every `beat`
// seconds while the question waits. Enter makes a new line in the text; Ctrl+Enter sends.

import { h, mountRoot, replace } from "./lib/dom.js";
import { focusNextCell, focusWhenShown, guardShortcuts } from "./lib/focus.js";
import { heartbeat, listen } from "./lib/model.js";

let askCount = 0;

/**
 * "You answered: A, B. “more text”"
 * @param {{choices?: string[], text?: string}} answer
 * @returns {string}
 */
export function describeAnswer(answer) {
  const choices = (answer.choices ?? []).join(", ");
  const text = (answer.text ?? "").trim();
  if (!choices && !text) return "You answered without choosing anything.";
  return `You answered: ${[choices, text ? `\u201c${text}\u201d` : ""].filter(Boolean).join(" \u2014 ")}`;
}

/** @param {RenderArgs} args */
function render({ model, el }) {
  mountRoot(el, "ae-ask");
  const unguard = guardShortcuts(el);
  const uid = `ae-ask-${++askCount}-${Math.random().toString(36).slice(2, 8)}`;
  /** @type {Record<string, any>} */
  const question = model.get("question") ?? {};
  /** @type {AskOption[]} */
  const options = Array.isArray(question["options"]) ? question["options"] : [];
  const multi = Boolean(question["multi_select"]);
  const allowText = question["allow_text"] !== false || options.length === 0;
  let answered = false;

  const inputs = options.map((option, i) => /** @type {HTMLInputElement} */ (h("input", {
    type: multi ? "checkbox" : "radio", name: `${uid}-choice`, value: String(option.label ?? ""),
    id: `${uid}-opt-${i}`, "aria-describedby": option.description ? `${uid}-desc-${i}` : null,
  })));
  const text = allowText ? /** @type {HTMLTextAreaElement} */ (h("textarea", {
    class: "ae-textarea", id: `${uid}-text`, rows: "2",
  })) : null;
  const send = /** @type {HTMLButtonElement} */ (h("button", { type: "submit", class: "ae-btn ae-btn-primary", disabled: true }, "Send answer"));
  const status = h("div", { class: "ae-ask-answer", role: "status", "aria-live": "polite", tabindex: "-1", hidden: true });
  const form = h("form", { class: "ae-frame ae-ask-form", "aria-labelledby": `${uid}-q` },
    h("fieldset", { class: "ae-ask-fieldset" },
      h("legend", { class: "ae-ask-question", id: `${uid}-q` }, String(question["question"] ?? "The agent has a question.")),
      h("div", { role: multi ? "group" : "radiogroup", "aria-labelledby": `${uid}-q` },
        ...inputs.map((input, i) => h("div", { class: "ae-ask-option" }, input,
          h("label", { for: input.id }, String(options[i]?.label ?? "")),
          options[i]?.description ? h("div", { class: "ae-ask-option-desc", id: `${uid}-desc-${i}` }, String(options[i]?.description)) : null))),
      text ? h("div", { class: "ae-ask-text" },
        h("label", { for: text.id }, options.length ? "Something else, or more detail (optional)" : "Your answer"), text) : null),
    h("div", { class: "ae-ask-actions" }, send,
      h("span", { class: "ae-muted" }, multi ? "Choose any that apply." : options.length ? "Choose one." : "")),
    status);
  el.replaceChildren(form);

  const valid = () => inputs.some((input) => input.checked) || Boolean(text?.value.trim());
  const refresh = () => { send.disabled = answered || !valid(); };

  /** @param {{choices?: string[], text?: string}} answer @param {string} [note] */
  function show(answer, note) {
    const hadFocus = el.contains(document.activeElement);
    answered = true;
    stopBeat();
    for (const control of form.querySelectorAll("input, textarea, button")) {
      /** @type {HTMLInputElement} */ (control).disabled = true;
    }
    const chosen = new Set(answer.choices ?? []);
    for (const input of inputs) input.checked = chosen.has(input.value);
    if (text && answer.text !== undefined) text.value = answer.text;
    el.classList.add("ae-answered");
    status.hidden = false;
    replace(status, note ?? describeAnswer(answer));
    if (hadFocus && !focusNextCell(el)) status.focus();
  }

  function submit() {
    if (answered || !valid()) return;
    const answer = {
      choices: inputs.filter((input) => input.checked).map((input) => input.value),
      text: text?.value.trim() ?? "",
    };
    model.send({ type: "answer", ...answer });
    show(answer);
  }

  function fromModel() {
    /** @type {Record<string, any>} */
    const answer = model.get("answer") ?? {};
    const state = model.get("status");
    if (state === "answered" && (answer["choices"] || answer["text"] !== undefined)) {
      show({ choices: answer["choices"] ?? [], text: answer["text"] ?? "" }, answer["note"]);
    } else if (state === "cancelled") {
      show({}, String(answer["note"] ?? "This question is no longer waiting for you."));
    }
  }

  form.addEventListener("submit", (event) => { event.preventDefault(); submit(); });
  form.addEventListener("change", refresh);
  form.addEventListener("input", refresh);
  form.addEventListener("keydown", (event) => {
    if (event.key === "Enter" && (event.ctrlKey || event.metaKey)) { event.preventDefault(); submit(); }
  });
  const stopBeat = heartbeat(model);

  fromModel();
  const unlisten = listen(model, { answer: fromModel, status: fromModel });
  model.send({ type: "ready" });
  if (!answered) focusWhenShown(el, () => inputs[0] ?? text, () => !answered);
  return () => {
    stopBeat();
    unguard();
    unlisten();
  };
}

export default { render };
