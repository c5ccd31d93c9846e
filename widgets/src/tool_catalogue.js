// The tool catalogue: every registered tool (deferred ones included), searched with the same
// scorer as tool_search (queries go to Python), with a detail pane showing the JSON schema and
// toggles to reveal a tool to the agent, hide it again, disable or enable it.

import { button, firstLine, h, mountRoot, replace } from "./lib/dom.js";
import { codeBlock } from "./lib/highlight.js";
import { listen } from "./lib/model.js";

const SEARCH_DELAY_MS = 150;

/**
 * Badges of a tool: deferred, revealed, disabled, hidden, read-only, load error.
 * @param {ToolSummary} tool
 * @returns {HTMLElement[]}
 */
export function badges(tool) {
  /** @type {[boolean, string, string, string][]} */
  const spec = [
    [tool.deferred && !tool.revealed, "deferred", "", "The agent sees only its name until it finds it with tool_search"],
    [tool.deferred && tool.revealed, "revealed", "ae-badge-ok", "Its schema is sent to the agent"],
    [tool.disabled, "disabled", "ae-badge-error", "The agent cannot see or call it"],
    [Boolean(tool.hidden), "hidden by a rule", "ae-badge-warn", "A permission rule keeps it out of the agent's view"],
    [tool.read_only, "read-only", "", "It does not change anything"],
    [Boolean(tool.error), "failed to load", "ae-badge-error", tool.error ?? ""],
  ];
  return spec.filter(([on]) => on).map(([, label, cls, title]) => h("span", { class: `ae-badge ${cls}`.trim(), title }, label));
}

/** @param {RenderArgs} args */
function render({ model, el }) {
  mountRoot(el, "ae-catalogue");
  const uid = `ae-cat-${Math.random().toString(36).slice(2, 8)}`;
  const state = {
    query: "",
    /** @type {string | null} */
    selected: null,
    /** @type {string[]} */
    shown: [],
    /** @type {ReturnType<typeof setTimeout> | null} */
    timer: null,
  };
  const search = /** @type {HTMLInputElement} */ (h("input", {
    type: "search", class: "ae-search", "aria-label": "Search tools",
    placeholder: "Search tools, as the agent's tool_search does", "aria-controls": `${uid}-list`,
  }));
  const count = h("span", { class: "ae-muted ae-cat-count", role: "status" });
  const message = h("div", { class: "ae-cat-message", role: "alert", hidden: true });
  const list = h("ul", { class: "ae-cat-list", id: `${uid}-list`, "aria-label": "Tools" });
  const detail = h("section", { class: "ae-cat-detail", "aria-label": "Tool details" });
  el.replaceChildren(h("div", { class: "ae-cat-top" }, search, count), message,
    h("div", { class: "ae-cat-body" }, list, detail));

  /** @returns {ToolSummary[]} */
  const tools = () => (Array.isArray(model.get("tools")) ? model.get("tools") : []);

  function names() {
    const all = tools().map((t) => t.name);
    if (!state.query.trim()) return all;
    if (model.get("results_for") === state.query) {
      const known = new Set(all);
      return (model.get("results") ?? []).filter((/** @type {string} */ n) => known.has(n));
    }
    return state.shown;
  }

  function drawList() {
    const byName = new Map(tools().map((t) => [t.name, t]));
    const focused = /** @type {HTMLElement | null} */ (document.activeElement)?.dataset?.["tool"] ?? null;
    state.shown = names();
    const all = tools();
    const searching = state.query.trim() && model.get("results_for") !== state.query;
    const deferred = all.filter((t) => t.deferred).length;
    count.textContent = searching ? "Searching\u2026"
      : state.query.trim() ? `${state.shown.length} of ${all.length} tools match`
        : `${all.length} tools \u00b7 ${deferred} deferred`;
    replace(list, state.shown.map((name) => {
      const tool = byName.get(name);
      if (!tool) return null;
      const row = button("", () => select(name), { cls: "ae-cat-row" });
      row.dataset["tool"] = name;
      if (name === state.selected) row.setAttribute("aria-current", "true");
      replace(row,
        h("span", { class: "ae-cat-row-head" },
          h("code", { class: "ae-cat-name" }, name),
          tool.server ? h("span", { class: "ae-badge ae-badge-brand", title: "Server" }, tool.server) : null,
          ...badges(tool)),
        h("span", { class: "ae-muted ae-cat-desc" }, firstLine(tool.description)));
      return h("li", null, row);
    }));
    if (focused) Array.from(list.querySelectorAll("button")).find((b) => b.dataset["tool"] === focused)?.focus();
  }

  function drawDetail() {
    const tool = tools().find((t) => t.name === state.selected);
    if (!tool) {
      replace(detail, h("p", { class: "ae-muted" }, "Choose a tool to see its schema and settings."));
      return;
    }
    /** @type {Record<string, any>} */
    const schema = model.get("selected_schema") ?? {};
    const ready = schema["name"] === tool.name;
    /** @param {string} type */
    const send = (type) => model.send({ type, name: tool.name });
    replace(detail,
      h("div", { class: "ae-cat-detail-head", role: "heading", "aria-level": "3" },
        h("code", null, tool.name), tool.server ? h("span", { class: "ae-badge ae-badge-brand" }, tool.server) : null, ...badges(tool)),
      h("p", { class: "ae-cat-full" }, ready && schema["description"] ? String(schema["description"]) : tool.description),
      h("div", { class: "ae-actions", role: "group", "aria-label": "Settings for this tool" },
        tool.deferred
          ? tool.revealed
            ? button("Hide from the agent", () => send("unreveal"), { title: "Send only its name again, until the agent finds it" })
            : button("Reveal to the agent", () => send("reveal"), { title: "Send its schema to the agent from the next step on" })
          : null,
        tool.disabled
          ? button("Enable", () => send("enable"), { cls: "ae-btn-primary" })
          : button("Disable", () => send("disable"), { cls: "ae-btn-danger", title: "The agent can neither see nor call it" })),
      tool.deferred ? h("p", { class: "ae-muted" }, tool.revealed
        ? "Revealed: the agent has its schema."
        : "Deferred: the agent sees only its name until it loads it with tool_search.") : null,
      h("div", { class: "ae-label ae-muted" }, "Parameters (JSON schema)"),
      ready
        ? schema["error"] ? h("p", { class: "ae-tool-error" }, String(schema["error"]))
          : codeBlock(JSON.stringify(schema["parameters"] ?? {}, null, 2), "json", `Schema of ${tool.name}`)
        : h("p", { class: "ae-muted" }, "Loading the schema\u2026"));
  }

  /** @param {string} name */
  function select(name) {
    state.selected = name;
    model.send({ type: "select", name });
    drawList();
    drawDetail();
  }

  function onInput() {
    state.query = search.value;
    if (state.timer !== null) clearTimeout(state.timer);
    if (!state.query.trim()) { drawList(); return; }
    state.timer = setTimeout(() => {
      state.timer = null;
      model.send({ type: "search", query: state.query });
      drawList();
    }, SEARCH_DELAY_MS);
  }

  /** @param {KeyboardEvent} event */
  function onListKey(event) {
    if (event.key !== "ArrowDown" && event.key !== "ArrowUp") return;
    const rows = Array.from(list.querySelectorAll("button"));
    const index = rows.indexOf(/** @type {HTMLButtonElement} */ (document.activeElement));
    const next = rows[Math.max(0, Math.min(rows.length - 1, index + (event.key === "ArrowDown" ? 1 : -1)))];
    if (next) { event.preventDefault(); next.focus(); }
  }

  /** @param {KeyboardEvent} event */
  function onSearchKey(event) {
    if (event.key === "ArrowDown") {
      const first = /** @type {HTMLElement | null} */ (list.querySelector("button"));
      if (first) { event.preventDefault(); first.focus(); }
    } else if (event.key === "Escape" && search.value) {
      event.preventDefault();
      event.stopPropagation();
      search.value = "";
      onInput();
    }
  }

  function onMessage() {
    const text = String(model.get("message") ?? "");
    message.hidden = !text;
    message.textContent = text;
  }

  const onTools = () => { drawList(); drawDetail(); };
  search.addEventListener("input", onInput);
  search.addEventListener("keydown", onSearchKey);
  list.addEventListener("keydown", onListKey);
  onTools();
  onMessage();
  const unlisten = listen(model, {
    tools: onTools, results: drawList, results_for: drawList, selected_schema: drawDetail,
    message: onMessage,
  });
  model.send({ type: "ready" });
  return () => {
    if (state.timer !== null) clearTimeout(state.timer);
    unlisten();
  };
}

export default { render };
