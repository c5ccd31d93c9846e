// The run transcript: assistant text as safe Markdown, tool-call cards with status, duration and
// a result preview, consecutive reads and searches grouped, reasoning collapsed, the agent's plan
// (todo_write) pinned on top, notices and usage. Python appends to `items`; each item has an id
// and a revision, and only new or changed items touch the DOM.

import { duration, h, mountRoot, replace } from "./lib/dom.js";
import { codeBlock } from "./lib/highlight.js";
import { renderMarkdown } from "./lib/markdown.js";
import { listen } from "./lib/model.js";

const STATUS_TEXT = {
  running: "running", waiting: "waiting for you", done: "done", error: "error",
  denied: "denied", cancelled: "cancelled",
};
const RUN_STATUS_TEXT = /** @type {Record<string, string>} */ ({
  running: "Running\u2026", done: "Done", error: "Stopped by an error", cancelled: "Cancelled",
});
const TODO_MARK = { pending: "[ ]", in_progress: "[~]", completed: "[x]" };
const TODO_TEXT = { pending: "to do", in_progress: "in progress", completed: "done" };

/**
 * @typedef {object} Group
 * @property {HTMLDetailsElement} el
 * @property {HTMLElement} summary
 * @property {HTMLElement} body
 * @property {TranscriptItem[]} members
 */

/**
 * @typedef {object} Rendered
 * @property {number} rev
 * @property {HTMLElement} node
 * @property {TranscriptItem} item
 * @property {Group | null} group
 */

/**
 * A notice's text with `backticked` commands as code, so what to type stands out.
 * @param {string} text
 * @returns {(string | HTMLElement)[]}
 */
export function noticeParts(text) {
  return text.split(/`([^`\n]+)`/).map((piece, i) => (i % 2 ? h("code", {}, piece) : piece));
}

/**
 * "Read 4 files, ran 2 searches".
 * @param {TranscriptItem[]} members
 * @returns {string}
 */
export function groupLabel(members) {
  const reads = members.filter((m) => m.group === "read").length;
  const searches = members.filter((m) => m.group === "search").length;
  const parts = [];
  if (reads) parts.push(`read ${reads} ${reads === 1 ? "file" : "files"}`);
  if (searches) parts.push(`ran ${searches} ${searches === 1 ? "search" : "searches"}`);
  const text = parts.join(", ");
  return text.charAt(0).toUpperCase() + text.slice(1);
}

/**
 * A todo list.
 * @param {TodoEntry[]} todos
 * @returns {HTMLElement}
 */
function todoList(todos) {
  return h("ul", { class: "ae-todos", role: "list" }, todos.map((todo) => {
    const status = TODO_MARK[todo.status] ? todo.status : "pending";
    return h("li", { class: `ae-todo ae-todo-${status}` },
      h("span", { class: "ae-todo-mark", "aria-hidden": "true" }, TODO_MARK[status]),
      h("span", { class: "ae-sr-only" }, `${TODO_TEXT[status]}: `),
      h("span", { class: "ae-todo-text" }, String(todo.content ?? "")));
  }));
}

/**
 * Summary line children of a tool card.
 * @param {TranscriptItem} item
 * @returns {Node[]}
 */
function toolSummary(item) {
  const status = item.status ?? "running";
  return [
    h("span", { class: `ae-badge ae-status ae-status-${status}` }, STATUS_TEXT[status] ?? status),
    h("code", { class: "ae-tool-name" }, item.name ?? "tool"),
    item.title && item.title !== item.name ? h("span", { class: "ae-tool-title" }, item.title) : null,
    item.allowed ? h("span", { class: "ae-allowed" }, item.allowed) : null,
    item.seconds !== undefined ? h("span", { class: "ae-muted ae-duration" }, duration(item.seconds)) : null,
  ].filter((n) => n !== null);
}

/**
 * A unified diff as a block with added and removed lines marked.
 * @param {string} text
 * @returns {HTMLElement}
 */
function diffBlock(text) {
  const lines = text.replace(/\n$/, "").split("\n").map((line) => {
    const kind = line.startsWith("+++") || line.startsWith("---") ? "file"
      : line.startsWith("@@") ? "hunk" : line.startsWith("+") ? "add" : line.startsWith("-") ? "del" : "ctx";
    return h("span", { class: `ae-diffline ae-diffline-${kind}` }, line + "\n");
  });
  return h("pre", { class: "ae-code ae-tool-diff" }, ...lines);
}

/**
 * Body children of a tool card.
 * @param {TranscriptItem} item
 * @returns {Node[]}
 */
function toolBody(item) {
  /** @type {Node[]} */
  const out = [];
  if (item.reason) out.push(h("div", { class: "ae-tool-reason" }, h("span", { class: "ae-muted" }, "Asked you because: "), item.reason));
  if (item.diff) out.push(h("div", { class: "ae-label ae-muted" }, "What changed"), diffBlock(item.diff));
  if (item.todos && item.todos.length) out.push(todoList(item.todos));
  else if (item.args) out.push(h("div", { class: "ae-label ae-muted" }, "Arguments"), codeBlock(item.args, "json"));
  if (item.output) out.push(h("div", { class: "ae-label ae-muted" }, "Output so far"), h("pre", { class: "ae-code ae-output" }, item.output));
  if (item.error) out.push(h("div", { class: "ae-tool-error", role: "note" }, item.error));
  else if (item.preview) out.push(h("div", { class: "ae-label ae-muted" }, "Result"), h("pre", { class: "ae-code ae-preview" }, item.preview));
  return out;
}

/**
 * Fill (or refill) the node of an item.
 * @param {HTMLElement} node @param {TranscriptItem} item
 */
function paint(node, item) {
  switch (item.kind) {
    case "text":
      replace(node, renderMarkdown(item.text ?? ""));
      return;
    case "reasoning": {
      const words = (item.text ?? "").split(/\s+/).filter(Boolean).length;
      const summary = /** @type {HTMLElement} */ (node.querySelector(":scope > summary"));
      summary.textContent = `Reasoning (${words} ${words === 1 ? "word" : "words"})`;
      replace(/** @type {HTMLElement} */ (node.querySelector(":scope > .ae-reasoning-text")), item.text ?? "");
      return;
    }
    case "tool": {
      node.className = `ae-tool ae-status-${item.status ?? "running"}`;
      replace(/** @type {HTMLElement} */ (node.querySelector(":scope > summary")), ...toolSummary(item));
      replace(/** @type {HTMLElement} */ (node.querySelector(":scope > .ae-tool-body")), ...toolBody(item));
      return;
    }
    case "notice":
      node.className = `ae-notice ae-notice-${item.level ?? "info"}`;
      replace(node, ...noticeParts(item.text ?? ""));
      return;
    case "run":
      replace(node, h("span", { class: "ae-muted" }, "agent_ext"), item.model ? h("span", { class: "ae-badge" }, item.model) : null);
      return;
    default:
      replace(node, item.text ?? "");
  }
}

/**
 * A fresh node for an item.
 * @param {TranscriptItem} item
 * @returns {HTMLElement}
 */
function create(item) {
  /** @type {HTMLElement} */
  let node;
  switch (item.kind) {
    case "text": node = h("div", { class: "ae-text" }); break;
    case "reasoning":
      node = h("details", { class: "ae-reasoning" }, h("summary"), h("div", { class: "ae-reasoning-text" }));
      break;
    case "tool":
      node = h("details", { class: "ae-tool" }, h("summary"), h("div", { class: "ae-tool-body" }));
      break;
    case "notice": node = h("div", { role: "note" }); break;
    case "run": node = h("div", { class: "ae-run" }); break;
    default: node = h("div", { class: "ae-item" });
  }
  node.dataset["itemId"] = String(item.id);
  paint(node, item);
  return node;
}

/** @param {RenderArgs} args */
function render({ model, el }) {
  mountRoot(el, "ae-transcript");
  const plan = h("section", { class: "ae-plan", "aria-label": "The agent's plan", hidden: true });
  const log = h("div", { class: "ae-log", role: "log", "aria-label": "Agent transcript" });
  const statusEl = h("span", { class: "ae-run-status", role: "status" });
  const usageEl = h("span", { class: "ae-usage ae-muted" });
  el.replaceChildren(plan, log, h("div", { class: "ae-footer" }, statusEl, usageEl));

  /** @type {Map<number, Rendered>} */
  const rendered = new Map();
  /** The last block if it is a groupable tool card (or a group of them). */
  /** @type {{id: number, group: Group | null} | null} */
  let tail = null;
  /** @type {number} */
  let planRev = -1;

  /** @param {Group} group */
  function relabel(group) {
    const running = group.members.some((m) => m.status === "running" || m.status === "waiting");
    const failed = group.members.filter((m) => m.status === "error" || m.status === "denied").length;
    const seconds = group.members.reduce((sum, m) => sum + (m.seconds ?? 0), 0);
    replace(group.summary,
      h("span", { class: `ae-badge ae-status ae-status-${running ? "running" : failed ? "error" : "done"}` },
        running ? "running" : failed ? `${failed} failed` : "done"),
      h("span", { class: "ae-group-label" }, groupLabel(group.members)),
      seconds ? h("span", { class: "ae-muted ae-duration" }, duration(seconds)) : null);
  }

  /** @param {TranscriptItem} item @param {Rendered} record */
  function place(item, record) {
    if (item.kind !== "tool" || !item.group) {
      log.appendChild(record.node);
      tail = null;
      return;
    }
    const previous = tail ? rendered.get(tail.id) : undefined;
    if (!tail || !previous) {
      log.appendChild(record.node);
      tail = { id: item.id, group: null };
      return;
    }
    let group = tail.group;
    if (!group) {
      const summary = h("summary");
      const body = h("div", { class: "ae-group-body" });
      group = { el: /** @type {HTMLDetailsElement} */ (h("details", { class: "ae-group" }, summary, body)), summary, body, members: [previous.item] };
      log.insertBefore(group.el, previous.node);
      body.appendChild(previous.node);
      previous.group = group;
    }
    group.body.appendChild(record.node);
    group.members.push(item);
    record.group = group;
    tail = { id: item.id, group };
    relabel(group);
  }

  function reset() {
    rendered.clear();
    log.replaceChildren();
    tail = null;
    planRev = -1;
  }

  function onItems() {
    /** @type {TranscriptItem[]} */
    const items = Array.isArray(model.get("items")) ? model.get("items") : [];
    if (items.length < rendered.size || (items.length && rendered.size && !rendered.has(items[0]?.id ?? -1))) reset();
    /** @type {TranscriptItem | null} */
    let latestTodos = null;
    for (const item of items) {
      if (item.kind === "tool" && item.todos) latestTodos = item;
      const record = rendered.get(item.id);
      if (!record) {
        const fresh = { rev: item.rev, node: create(item), item, group: null };
        rendered.set(item.id, fresh);
        place(item, fresh);
      } else if (record.rev !== item.rev) {
        record.rev = item.rev;
        record.item = item;
        paint(record.node, item);
        if (record.group) {
          const group = record.group;
          group.members = group.members.map((m) => (m.id === item.id ? item : m));
          relabel(group);
        }
      }
    }
    if (latestTodos && (latestTodos.id * 1e6 + latestTodos.rev) !== planRev) {
      planRev = latestTodos.id * 1e6 + latestTodos.rev;
      const todos = latestTodos.todos ?? [];
      const done = todos.filter((t) => t.status === "completed").length;
      replace(plan, h("div", { class: "ae-plan-title" }, `Plan \u00b7 ${done} of ${todos.length} done`), todoList(todos));
      plan.hidden = false;
    }
  }

  function onStatus() {
    const status = String(model.get("status") ?? "running");
    statusEl.className = `ae-run-status ae-run-${status}`;
    statusEl.textContent = RUN_STATUS_TEXT[status] ?? status;
    log.setAttribute("aria-busy", String(status === "running"));
  }

  function onUsage() {
    /** @type {Record<string, any>} */
    const usage = model.get("usage") ?? {};
    const fmt = (/** @type {unknown} */ n) => Number(n ?? 0).toLocaleString("en-US");
    const mark = usage["estimated"] ? "~" : "";
    const parts = [];
    if (usage["input_tokens"] !== undefined || usage["output_tokens"] !== undefined) {
      parts.push(`${mark}${fmt(usage["input_tokens"])} tokens in \u00b7 ${mark}${fmt(usage["output_tokens"])} out`);
    }
    if (typeof usage["cost"] === "number") parts.push(`$${usage["cost"].toFixed(4)}`);
    usageEl.textContent = parts.join(" \u00b7 ");
    usageEl.title = usage["estimated"] ? "Estimated: the provider reported no usage" : "";
  }

  onItems();
  onStatus();
  onUsage();
  const unlisten = listen(model, { items: onItems, status: onStatus, usage: onUsage });
  model.send({ type: "ready" });
  return unlisten;
}

export default { render };
