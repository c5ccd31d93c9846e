// The approval widget: what the agent proposes (a diff, a command, a call) and why you are
// asked, with approve, reject with feedback, edit-then-approve, always allow and cancel run.
// Several proposals of one step of the agent come as one group (the `requests` trait) with
// Approve all and Reject all besides each card's own buttons.
// Messages to Python: {type: "ready"} on render, {type: "alive"} every `beat` seconds while a
// decision is wanted, then one {type: "decision", ...} per card (with its call_id in a group).

import { button, h, isTyping, mountRoot, replace } from "./lib/dom.js";
import { codeBlock, languageFor } from "./lib/highlight.js";
import { changeStats, diffLines, diffStats, parseUnified, splitLines, toHunks } from "./lib/diff.js";
import { formatStats, renderDiff } from "./lib/diff_view.js";
import { focusNextCell, focusWhenShown, guardShortcuts } from "./lib/focus.js";
import { heartbeat, listen } from "./lib/model.js";

const LAYOUT_KEY = "agent_ext.diff_layout";
let viewCount = 0;

/**
 * @typedef {object} DecisionInfo
 * @property {string} outcome approve | reject | always | cancel
 * @property {string | null} [modified]
 * @property {boolean} [edited]
 * @property {string | null} [feedback]
 * @property {string | null} [scope]
 * @property {string} [persist]
 * @property {string} [by] who decided: "user" (this widget) or e.g. "policy", "timeout"
 * @property {string} [note] replaces the generated description
 * @property {string} [stats] the edit stats shown with an edited approval
 */

/** @returns {"unified" | "split"} */
function savedLayout() {
  try {
    return globalThis.localStorage?.getItem(LAYOUT_KEY) === "split" ? "split" : "unified";
  } catch {
    return "unified";
  }
}

/** @param {"unified" | "split"} layout */
function saveLayout(layout) {
  try {
    globalThis.localStorage?.setItem(LAYOUT_KEY, layout);
  } catch {
    // storage can be unavailable (private windows, sandboxed frames): the choice just isn't kept
  }
}

/**
 * What an "always allow" scope covers, in words.
 * @param {string} scope @param {string} tool @param {string | null} path
 * @returns {string}
 */
export function scopeLabel(scope, tool, path) {
  switch (scope) {
    case "file": return path ? `${tool} on ${path}` : `${tool} on this file`;
    case "directory": case "folder": return `${tool} in this folder`;
    case "tool": return `every ${tool} call`;
    case "command": return "this exact command";
    case "prefix": return "commands that start like this one";
    case "server": return "every tool of this server";
    default: return scope;
  }
}

/**
 * The sentence shown once the request is decided.
 * @param {DecisionInfo} info @param {string} tool @param {string | null} path
 * @returns {string}
 */
export function describeDecision(info, tool, path) {
  if (info.note) return info.note;
  const you = !info.by || info.by === "user";
  const by = you ? "" : ` (${info.by})`;
  switch (info.outcome) {
    case "approve":
      if (!you) return `Approved${by}.`;
      return info.edited ? `You approved your edited version${info.stats ? ` (${info.stats})` : ""}.` : "You approved this.";
    case "reject": {
      const said = info.feedback ? ` Your feedback goes to the agent: \u201c${info.feedback}\u201d` : "";
      return `${you ? "You rejected this." : `Rejected${by}.`}${said}`;
    }
    case "always": {
      const where = info.persist === "project" ? "in this project" : "for this session";
      const what = scopeLabel(info.scope ?? "tool", tool, path);
      return you ? `You always allow ${what} ${where}. This call runs now.` : `Always allowed${by}: ${what} ${where}.`;
    }
    case "cancel":
      return you ? "You cancelled the run." : `The run was cancelled${by}.`;
    default:
      return `Decided: ${info.outcome}${by}.`;
  }
}

/**
 * @param {Record<string, any>} extra @param {Hunk[] | null} hunks
 * @returns {string | null}
 */
function actionLabel(extra, hunks) {
  const isCell = extra["cell_id"] != null || extra["cell_type"] != null;
  const thing = isCell ? "cell" : "file";
  const action = String(extra["action"] ?? "").toLowerCase();
  if (["create", "insert", "new", "add"].includes(action)) return `new ${thing}`;
  if (["delete", "remove"].includes(action)) return `delete ${thing}`;
  if (!hunks || !hunks.length) return null;
  const lines = hunks.flatMap((hunk) => hunk.lines);
  if (lines.every((l) => l.type === "add")) return `new ${thing}`;
  if (lines.every((l) => l.type === "del")) return `delete ${thing}`;
  return null;
}

/** The DOM event the notebook bridge answers by scrolling to a cell and marking it. */
export const REVEAL_EVENT = "agent-ext:reveal-cell";

/**
 * The edited cell as the user sees it ("cell 5 · [12] · `df = …`"), its type and notebook, and
 * a link that scrolls the live notebook to it (cell ids stay out of sight, in the tooltip).
 * @param {Record<string, any>} extra
 * @returns {Node[]}
 */
export function cellTarget(extra) {
  const id = extra["cell_id"] != null ? String(extra["cell_id"]) : null;
  const label = String(extra["cell_label"] ?? (id ? `cell ${id}` : "cell"));
  /** @type {Node[]} */
  const out = [h("span", { class: "ae-target", title: id ? `cell id ${id}` : null }, label)];
  if (extra["cell_type"]) out.push(h("span", { class: "ae-badge" }, String(extra["cell_type"])));
  if (extra["notebook"]) {
    const notebook = String(extra["notebook"]);
    out.push(h("code", { class: "ae-muted", title: notebook }, notebook.split(/[\\/]/).pop() || notebook));
  }
  if (id && String(extra["action"] ?? "") !== "insert") {
    const link = h("a", { class: "ae-cell-link", href: "#", title: "Scroll the notebook to this cell" }, "show cell");
    link.addEventListener("click", (event) => {
      event.preventDefault();
      const shown = !link.dispatchEvent(new CustomEvent(REVEAL_EVENT, { bubbles: true, cancelable: true, detail: { cellId: id } }));
      link.title = shown ? "Scroll the notebook to this cell"
        : "This page cannot scroll to the cell: the agent-ext extension is not running here";
    });
    out.push(link);
  }
  return out;
}

/**
 * @typedef {object} Card
 * @property {HTMLElement} node the card (its region and panels)
 * @property {HTMLElement} region the focusable region
 * @property {() => boolean} pending
 * @property {(info: DecisionInfo) => void} show shows a decision and locks the card
 * @property {(choice: Choice) => void} decide
 * @property {(event: KeyboardEvent) => boolean} key handles a key pressed in the card
 */

/**
 * @typedef {{outcome: string, modified?: string | null, feedback?: string | null, scope?: string | null, persist?: string}} Choice
 */

/**
 * One proposal's card. `send` gets the decision message; `decided` runs after it is shown.
 * @param {Record<string, any>} request @param {HTMLElement} host gets the decided classes
 * @param {{send: (message: Record<string, any>) => void, decided: () => void, inGroup: boolean}} ctx
 * @returns {Card}
 */
function card(request, host, ctx) {
  const uid = `ae-confirm-${++viewCount}-${Math.random().toString(36).slice(2, 8)}`;
  /** @type {Record<string, any>} */
  const details = request["details"] ?? {};
  /** @type {Record<string, any>} */
  const extra = details["extra"] ?? {};
  const kind = String(details["kind"] ?? "info");
  const tool = String(request["tool_name"] || details["tool_name"] || "tool");
  const path = typeof details["file_path"] === "string" ? details["file_path"] : null;
  const proposed = typeof details["proposed"] === "string" ? details["proposed"] : null;
  const original = typeof details["original"] === "string" ? details["original"] : null;
  const command = typeof details["command"] === "string" ? details["command"] : null;
  const lang = languageFor({ language: extra["language"], path, cellType: extra["cell_type"] });
  /** @type {Hunk[] | null} */
  let hunks = null;
  if (typeof details["diff"] === "string" && details["diff"].trim()) hunks = parseUnified(details["diff"]);
  else if (kind === "edit" && (original !== null || proposed !== null)) {
    hunks = toHunks(diffLines(splitLines(original), splitLines(proposed)));
  }
  const scopes = Array.isArray(request["scopes"]) && request["scopes"].length
    ? request["scopes"].map(String) : ["tool"];

  const state = {
    /** @type {"main" | "edit" | "reject" | "always"} */
    mode: "main",
    layout: savedLayout(),
    decided: false,
    /** @type {HTMLElement | null} */
    opener: null,
  };

  // -- header ---------------------------------------------------------------------------------
  const statsEl = h("span", { class: "ae-stats" });
  const action = actionLabel(extra, hunks);
  /** @type {(Node | null)[]} */
  const target = [];
  if (extra["cell_id"] != null || extra["cell_type"] != null) {
    target.push(...cellTarget(extra));
  } else if (path) {
    target.push(h("code", { class: "ae-target" }, path));
  }
  if (action) target.push(h("span", { class: action.startsWith("delete") ? "ae-badge ae-badge-error" : "ae-badge ae-badge-ok" }, action));
  const title = String(details["title"] || `Allow ${tool}?`);
  const header = h("div", { class: "ae-confirm-header" },
    h("div", { class: "ae-confirm-title", role: "heading", "aria-level": ctx.inGroup ? "4" : "3", id: `${uid}-title` }, title),
    h("div", { class: "ae-confirm-meta" },
      h("span", { class: "ae-badge ae-badge-brand", title: "The tool that asks" }, tool), ...target, statsEl),
    request["reason"] ? h("div", { class: "ae-confirm-reason", id: `${uid}-reason` },
      h("span", { class: "ae-muted" }, "Why you are asked: "), String(request["reason"])) : null);

  // -- body -----------------------------------------------------------------------------------
  const body = h("div", { class: "ae-confirm-body" });
  const summary = String(details["summary"] ?? "");
  if (summary && summary !== title) body.appendChild(h("p", { class: "ae-summary" }, summary));
  if (command !== null) {
    body.appendChild(h("div", { class: "ae-command" },
      h("div", { class: "ae-label ae-muted" }, kind === "edit" ? "The command that makes this edit" : "The command"),
      codeBlock(command, "shell", "Command"),
      extra["cwd"] ? h("div", { class: "ae-muted" }, "Runs in ", h("code", null, String(extra["cwd"]))) : null));
  }
  if (kind === "mcp" && extra["arguments"] !== undefined) {
    body.appendChild(h("div", { class: "ae-args" },
      h("div", { class: "ae-label ae-muted" }, "Arguments"),
      codeBlock(JSON.stringify(extra["arguments"], null, 2), "json", "Arguments")));
  }
  const diffHost = h("div", { class: "ae-diff-host" });
  /** @type {HTMLButtonElement[]} */
  const layoutButtons = [];
  if (hunks && hunks.length) {
    const toolbar = h("div", { class: "ae-toolbar", role: "group", "aria-label": "Diff layout" });
    for (const [value, label] of /** @type {const} */ ([["unified", "Unified"], ["split", "Side by side"]])) {
      const b = button(label, () => setLayout(value), { cls: "ae-btn-small" });
      b.dataset["layout"] = value;
      layoutButtons.push(b);
      toolbar.appendChild(b);
    }
    body.append(toolbar, diffHost);
  } else if (hunks) {
    body.appendChild(h("p", { class: "ae-muted" }, "The proposal changes nothing."));
  }

  /** @param {"unified" | "split"} layout */
  function setLayout(layout) {
    state.layout = layout;
    saveLayout(layout);
    for (const b of layoutButtons) b.setAttribute("aria-pressed", String(b.dataset["layout"] === layout));
    if (hunks && hunks.length) {
      replace(diffHost, renderDiff(hunks, layout, lang, `Changes${path ? ` to ${path}` : ""}`));
    }
  }

  // -- panels ---------------------------------------------------------------------------------
  const editor = /** @type {HTMLTextAreaElement} */ (h("textarea", {
    class: "ae-textarea ae-editor", id: `${uid}-editor`, spellcheck: "false",
    rows: String(Math.min(30, Math.max(4, splitLines(proposed).length + 1))),
  }));
  editor.value = proposed ?? "";
  editor.addEventListener("input", () => updateStats());
  const editPanel = h("div", { class: "ae-panel", role: "group", "aria-label": "Edit, then approve", hidden: true },
    h("label", { for: `${uid}-editor` }, "Edit the proposal; your version is what runs. Enter makes a new line; Ctrl+Enter approves it, Esc goes back."),
    editor,
    h("div", { class: "ae-panel-actions" },
      button("Approve your version", () => approveEdited(), { cls: "ae-btn-primary", key: "Ctrl+Enter" }),
      button("Reset to the agent's version", () => { editor.value = proposed ?? ""; updateStats(); }),
      button("Back", () => setMode("main"), { key: "Esc" })));

  const feedback = /** @type {HTMLTextAreaElement} */ (h("textarea", {
    class: "ae-textarea ae-feedback", id: `${uid}-feedback`, rows: "3",
    placeholder: "Tell the agent why, or what to do instead (optional)",
  }));
  const rejectPanel = h("div", { class: "ae-panel", role: "group", "aria-label": "Reject", hidden: true },
    h("label", { for: `${uid}-feedback` }, "Feedback for the agent (optional). Enter makes a new line; Ctrl+Enter rejects, Esc goes back."),
    feedback,
    h("div", { class: "ae-panel-actions" },
      button("Reject", () => rejectNow(), { cls: "ae-btn-danger", key: "Ctrl+Enter" }),
      button("Back", () => setMode("main"), { key: "Esc" })));

  const scopeInputs = scopes.map((scope, i) => /** @type {HTMLInputElement} */ (h("input", {
    type: "radio", name: `${uid}-scope`, value: scope, id: `${uid}-scope-${i}`, checked: i === 0,
  })));
  const persistInputs = /** @type {const} */ (["session", "project"]).map((value) => /** @type {HTMLInputElement} */ (h("input", {
    type: "radio", name: `${uid}-persist`, value, id: `${uid}-persist-${value}`, checked: value === "session",
  })));
  const alwaysPanel = h("div", { class: "ae-panel", role: "group", "aria-label": "Always allow", hidden: true },
    h("fieldset", { class: "ae-fieldset" }, h("legend", null, "Always allow"),
      ...scopeInputs.map((input, i) => h("div", { class: "ae-choice" }, input,
        h("label", { for: input.id }, scopeLabel(scopes[i] ?? "tool", tool, path))))),
    h("fieldset", { class: "ae-fieldset" }, h("legend", null, "Remember it"),
      h("div", { class: "ae-choice" }, persistInputs[0], h("label", { for: persistInputs[0].id }, "For this session")),
      h("div", { class: "ae-choice" }, persistInputs[1], h("label", { for: persistInputs[1].id }, "For this project (saved in its settings)"))),
    h("div", { class: "ae-panel-actions" },
      button("Always allow", () => alwaysNow(), { cls: "ae-btn-primary", key: "Ctrl+Enter" }),
      button("Back", () => setMode("main"), { key: "Esc" })));

  // -- actions --------------------------------------------------------------------------------
  const openers = {
    reject: button("Reject\u2026", () => setMode("reject"), { key: "r", aria: "Reject, with optional feedback" }),
    edit: proposed !== null ? button("Edit, then approve\u2026", () => setMode("edit"), { key: "e", aria: "Edit the proposal, then approve it" }) : null,
    always: button("Always allow\u2026", () => setMode("always"), { aria: "Always allow, choosing what it covers" }),
  };
  const actions = h("div", { class: "ae-actions", role: "group", "aria-label": "Your decision" },
    button("Approve", () => decide({ outcome: "approve" }), { cls: "ae-btn-primary", key: "a" }),
    openers.reject, openers.edit, openers.always,
    button("Cancel run", () => decide({ outcome: "cancel" }), { cls: "ae-btn-danger", title: "Stop the agent's whole run" }));
  const hint = h("div", { class: "ae-hint ae-muted" },
    `Keys: a approve \u00b7 r reject${proposed !== null ? " \u00b7 e edit" : ""} \u00b7 Esc back`);
  const outcome = h("div", { class: "ae-outcome", role: "status", "aria-live": "polite", tabindex: "-1", hidden: true });

  const region = h("section", {
    class: "ae-frame ae-confirm-region", role: "region", tabindex: "0",
    "aria-labelledby": `${uid}-title`, "aria-describedby": request["reason"] ? `${uid}-reason` : null,
  }, header, body, editPanel, rejectPanel, alwaysPanel, actions, hint, outcome);

  /** @param {"main" | "edit" | "reject" | "always"} mode */
  function setMode(mode) {
    if (state.decided) return;
    const previous = state.mode;
    state.mode = mode;
    editPanel.hidden = mode !== "edit";
    rejectPanel.hidden = mode !== "reject";
    alwaysPanel.hidden = mode !== "always";
    actions.hidden = mode !== "main";
    hint.hidden = mode !== "main";
    updateStats();
    if (mode === "edit") { state.opener = openers.edit; editor.focus(); }
    else if (mode === "reject") { state.opener = openers.reject; feedback.focus(); }
    else if (mode === "always") { state.opener = openers.always; scopeInputs[0]?.focus(); }
    else if (previous !== "main") (state.opener ?? region).focus();
  }

  function editStats() {
    const agent = hunks ? diffStats(hunks) : { added: 0, removed: 0 };
    const mine = changeStats(proposed, editor.value);
    if (!mine.added && !mine.removed) return formatStats(agent);
    return `${formatStats(agent)} by the agent, ${formatStats(mine)} by you`;
  }

  function updateStats() {
    if (state.mode === "edit") statsEl.textContent = editStats();
    else statsEl.textContent = hunks && hunks.length ? formatStats(diffStats(hunks)) : "";
  }

  /** @param {Choice} choice */
  function decide(choice) {
    if (state.decided) return;
    const message = {
      type: "decision",
      outcome: choice.outcome,
      modified: choice.modified ?? null,
      feedback: choice.feedback ?? null,
      scope: choice.scope ?? null,
      persist: choice.persist ?? "session",
    };
    const stats = message.modified !== null ? editStats() : undefined;
    ctx.send(message);
    show({ ...message, edited: message.modified !== null, by: "user", stats });
  }

  function approveEdited() {
    const text = editor.value;
    decide({ outcome: "approve", modified: text === proposed ? null : text });
  }

  function rejectNow() {
    decide({ outcome: "reject", feedback: feedback.value.trim() || null });
  }

  function alwaysNow() {
    const scope = scopeInputs.find((input) => input.checked)?.value ?? scopes[0] ?? "tool";
    const persist = persistInputs.find((input) => input.checked)?.value ?? "session";
    decide({ outcome: "always", scope, persist });
  }

  /** @param {DecisionInfo} info */
  function show(info) {
    if (state.decided) return;
    state.decided = true;
    for (const control of [editPanel, rejectPanel, alwaysPanel, actions].flatMap((p) => Array.from(p.querySelectorAll("button, textarea, input")))) {
      /** @type {HTMLButtonElement} */ (control).disabled = true;
    }
    editPanel.hidden = info.outcome !== "approve" || !info.edited;
    rejectPanel.hidden = true;
    alwaysPanel.hidden = true;
    actions.hidden = true;
    hint.hidden = true;
    host.classList.add("ae-decided", `ae-decided-${info.outcome}`);
    outcome.hidden = false;
    replace(outcome, h("span", { class: `ae-badge ae-outcome-${info.outcome}` }, info.outcome), " ",
      describeDecision(info, tool, path));
    ctx.decided();
  }

  /** @param {KeyboardEvent} event @returns {boolean} */
  function key(event) {
    if (state.decided) return false;
    if (event.key === "Escape") {
      if (state.mode === "main") return false;
      setMode("main");
      return true;
    }
    if ((event.ctrlKey || event.metaKey) && event.key === "Enter" && state.mode !== "main") {
      if (state.mode === "edit") approveEdited();
      else if (state.mode === "reject") rejectNow();
      else alwaysNow();
      return true;
    }
    if (event.ctrlKey || event.metaKey || event.altKey || event.shiftKey || isTyping(event) || state.mode !== "main") return false;
    const pressed = event.key.toLowerCase();
    if (pressed === "a") decide({ outcome: "approve" });
    else if (pressed === "r") setMode("reject");
    else if (pressed === "e" && proposed !== null) setMode("edit");
    else return false;
    return true;
  }

  setLayout(state.layout);
  updateStats();
  return { node: region, region, pending: () => !state.decided, show, decide, key };
}

/** @param {RenderArgs} args */
function render({ model, el }) {
  mountRoot(el, "ae-confirm");
  const unguard = guardShortcuts(el);
  /** @type {Record<string, any>[]} */
  const group = Array.isArray(model.get("requests")) ? model.get("requests") : [];
  const requests = group.length ? group : [model.get("request") ?? {}];
  const inGroup = group.length > 0;
  let focusWasInside = false;
  el.addEventListener("focusin", () => { focusWasInside = true; });
  el.addEventListener("focusout", (event) => {
    const to = /** @type {Node | null} */ (event.relatedTarget);
    if (to && !el.contains(to)) focusWasInside = false;
  });

  /** @type {Map<string, Card>} */
  const cards = new Map();
  /** @type {Card[]} */
  const order = [];
  const pendingCards = () => order.filter((c) => c.pending());
  const counter = h("span", { class: "ae-group-count ae-muted", role: "status", "aria-live": "polite" });

  function afterDecision() {
    const left = pendingCards();
    if (inGroup) counter.textContent = left.length ? `${left.length} of ${order.length} still wait for you` : "All decided.";
    if (inGroup) for (const b of groupButtons) b.disabled = left.length === 0;
    if (!el.contains(document.activeElement) && !(focusWasInside && document.activeElement === document.body)) return;
    if (left.length) { left[0]?.region.focus(); return; }
    stopBeat();
    if (!focusNextCell(el)) order[order.length - 1]?.region.focus();
  }

  for (const [i, request] of requests.entries()) {
    const host = inGroup ? h("div", { class: "ae-card" }) : el;
    const callId = String(request["call_id"] ?? i);
    const made = card(request, host, {
      inGroup,
      send: (message) => model.send(inGroup ? { ...message, call_id: callId } : message),
      decided: () => afterDecision(),
    });
    cards.set(callId, made);
    order.push(made);
    if (inGroup) host.appendChild(made.node);
  }

  /** @type {HTMLButtonElement[]} */
  const groupButtons = [];
  if (inGroup) {
    const approveAll = button("Approve all", () => { for (const c of pendingCards()) c.decide({ outcome: "approve" }); },
      { cls: "ae-btn-primary", key: "Shift+A", aria: "Approve every proposal still waiting" });
    const rejectAll = button("Reject all", () => { for (const c of pendingCards()) c.decide({ outcome: "reject" }); },
      { cls: "ae-btn-danger", key: "Shift+R", aria: "Reject every proposal still waiting" });
    groupButtons.push(approveAll, rejectAll);
    counter.textContent = `${order.length} proposals from one step of the agent`;
    const bar = h("div", { class: "ae-group-bar", role: "group", "aria-label": "Every proposal" },
      h("span", { class: "ae-group-title", role: "heading", "aria-level": "3" }, `The agent proposes ${order.length} changes`),
      approveAll, rejectAll, counter);
    el.replaceChildren(h("div", { class: "ae-group" }, bar, ...order.map((c) => /** @type {HTMLElement} */ (c.node.parentElement))));
  } else {
    el.replaceChildren(order[0]?.node ?? h("div"));
  }

  /** @param {KeyboardEvent} event */
  function onKey(event) {
    const handled = () => { event.preventDefault(); event.stopPropagation(); };
    if (inGroup && event.shiftKey && !event.ctrlKey && !event.metaKey && !event.altKey && !isTyping(event)) {
      const pressed = event.key.toLowerCase();
      if (pressed === "a" || pressed === "r") {
        if (!pendingCards().length) return;
        handled();
        groupButtons[pressed === "a" ? 0 : 1]?.click();
        return;
      }
    }
    const inside = order.find((c) => c.node.contains(/** @type {Node} */ (event.target))) ?? pendingCards()[0];
    if (inside && inside.key(event)) handled();
  }

  function fromModel() {
    const status = model.get("status");
    /** @type {Record<string, any>} */
    const decision = model.get("decision") ?? {};
    if (inGroup) {
      /** @type {Record<string, Record<string, any>>} */
      const decided = model.get("decisions") ?? {};
      for (const [callId, info] of Object.entries(decided)) {
        if (info && info["outcome"]) cards.get(callId)?.show({ ...info, outcome: String(info["outcome"]) });
      }
    } else if (status === "decided" && decision["outcome"]) {
      order[0]?.show({ ...decision, outcome: String(decision["outcome"]) });
    }
    if (status === "cancelled") {
      for (const c of pendingCards()) {
        c.show({ outcome: "withdrawn", by: "agent_ext", note: String(decision["note"] ?? "This request is no longer waiting for you.") });
      }
    }
    if (!pendingCards().length) stopBeat();
  }

  const stopBeat = heartbeat(model);

  el.addEventListener("keydown", onKey);
  fromModel();
  const unlisten = listen(model, { status: fromModel, decision: fromModel, decisions: fromModel });
  model.send({ type: "ready" });
  if (pendingCards().length) {
    focusWhenShown(el, () => pendingCards()[0]?.region ?? null, () => pendingCards().length > 0);
  }
  return () => {
    stopBeat();
    unguard();
    el.removeEventListener("keydown", onKey);
    unlisten();
  };
}

export default { render };
