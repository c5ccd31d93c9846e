// The project's own files ask for more than narrowing: each MCP server (command, args, env
// names) and each widening setting, with its file. Sends {type: "answer", answer} once, with
// answer "trust", "once" or "distrust", then shows what was decided.

import { button, h, mountRoot, replace } from "./lib/dom.js";
import { listen } from "./lib/model.js";

/** @type {Record<string, string>} */
const SAID = {
  trust: "Trusted: these servers and settings apply, now and in later sessions, until the files change.",
  once: "Trusted for this session only; you will be asked again next time.",
  distrust: "Not trusted: only the project's deny and ask rules apply. `%agent trust` trusts it later.",
};

/**
 * The value of a setting as text: strings as they are, anything else as JSON.
 * @param {unknown} value
 * @returns {string}
 */
export function settingText(value) {
  return typeof value === "string" ? value : JSON.stringify(value);
}

/**
 * The rows shown for one MCP server: [label, text] pairs, env and header names only.
 * @param {Record<string, any>} value
 * @returns {[string, string][]}
 */
export function serverRows(value) {
  /** @type {[string, string][]} */
  const rows = [];
  if (typeof value !== "object" || value === null || Array.isArray(value)) return [["entry", JSON.stringify(value)]];
  for (const key of ["type", "transport", "command", "url", "cwd"]) {
    if (key in value) rows.push([key, settingText(value[key])]);
  }
  if ("args" in value) {
    rows.push(["args", Array.isArray(value["args"]) ? value["args"].map((a) => JSON.stringify(a)).join(" ") : JSON.stringify(value["args"])]);
  }
  for (const key of ["env", "headers"]) {
    if (key in value) {
      const names = Array.isArray(value[key]) ? value[key] : [];
      rows.push([`${key} names`, names.length ? names.join(", ") : "(none)"]);
    }
  }
  for (const [key, v] of Object.entries(value)) {
    if (!["type", "transport", "command", "url", "cwd", "args", "env", "headers"].includes(key)) rows.push([key, settingText(v)]);
  }
  return rows;
}

let trustCount = 0;

/** @param {RenderArgs} args */
function render({ model, el }) {
  mountRoot(el, "ae-trust");
  const uid = `ae-trust-${++trustCount}-${Math.random().toString(36).slice(2, 8)}`;
  /** @type {Record<string, any>} */
  const request = model.get("request") ?? {};
  /** @type {Record<string, any>[]} */
  const items = Array.isArray(request["items"]) ? request["items"] : [];
  /** @type {string[]} */
  const narrowing = Array.isArray(request["narrowing"]) ? request["narrowing"] : [];
  const servers = items.filter((i) => i["kind"] === "server");
  const settings = items.filter((i) => i["kind"] !== "server");
  let answered = false;

  const serverList = servers.length ? h("section", { class: "ae-trust-section", "aria-label": "MCP servers" },
    h("h4", { class: "ae-trust-heading" }, `MCP servers it would start (${servers.length})`),
    h("ul", { class: "ae-trust-list" }, ...servers.map((item) => h("li", { class: "ae-trust-item" },
      h("div", null, h("strong", null, String(item["key"] ?? "")), h("span", { class: "ae-muted" }, ` in ${item["file"] ?? ""}`)),
      h("dl", { class: "ae-trust-rows" }, ...serverRows(item["value"] ?? {}).flatMap(([label, text]) => [
        h("dt", null, label), h("dd", null, h("code", null, text))])))))) : null;
  const settingList = settings.length ? h("section", { class: "ae-trust-section", "aria-label": "Settings" },
    h("h4", { class: "ae-trust-heading" }, `Settings that would widen what the agent may do (${settings.length})`),
    h("ul", { class: "ae-trust-list" }, ...settings.map((item) => h("li", { class: "ae-trust-item" },
      h("code", null, String(item["key"] ?? "")), " = ", h("code", null, settingText(item["value"])),
      h("span", { class: "ae-muted" }, ` in ${item["file"] ?? ""}`))))) : null;
  const narrowNote = narrowing.length ? h("p", { class: "ae-muted" },
    `Applied already (they only refuse or ask more): ${narrowing.join(", ")}.`) : null;

  const status = h("div", { class: "ae-trust-status", role: "status", "aria-live": "polite", tabindex: "-1", hidden: true });
  const buttons = [
    button("Trust", () => answer("trust"), { cls: "ae-btn-primary", title: "Apply these servers and settings, and remember the answer" }),
    button("Trust once", () => answer("once"), { title: "Apply them for this session only" }),
    button("Don't trust", () => answer("distrust"), { cls: "ae-btn-danger", title: "Withhold them and remember the answer until the files change" }),
  ];
  const heading = `This project asks for more than its deny and ask rules${request["changed"] ? " (its files changed since you last answered)" : ""}`;
  const root = h("div", { class: "ae-frame ae-trust-box", role: "group", "aria-labelledby": `${uid}-title` },
    h("div", { class: "ae-trust-title", id: `${uid}-title` }, heading),
    h("div", { class: "ae-muted" }, `Project: ${request["root"] ?? ""}. Nothing below runs or applies until you choose.`),
    serverList, settingList, narrowNote,
    h("div", { class: "ae-trust-actions" }, ...buttons),
    status);
  el.replaceChildren(root);

  /** @param {string} what @param {string} [note] */
  function show(what, note) {
    const hadFocus = el.contains(document.activeElement);
    answered = true;
    for (const b of buttons) b.disabled = true;
    el.classList.add(what === "distrust" ? "ae-trust-refused" : "ae-trust-done");
    status.hidden = false;
    replace(status, note ?? SAID[what] ?? "");
    if (hadFocus) status.focus();
  }

  /** @param {string} what */
  function answer(what) {
    if (answered) return;
    model.send({ type: "answer", answer: what });
    show(what);
  }

  function fromModel() {
    /** @type {Record<string, any>} */
    const decision = model.get("decision") ?? {};
    const state = model.get("status");
    if (state === "decided" && typeof decision["answer"] === "string") show(decision["answer"], decision["note"]);
    else if (state === "cancelled") show("cancelled", String(decision["note"] ?? "This question is no longer waiting for you; nothing was trusted."));
  }

  fromModel();
  const unlisten = listen(model, { decision: fromModel, status: fromModel });
  model.send({ type: "ready" });
  return unlisten;
}

export default { render };
