import { describe, expect, it } from "vitest";
import widget, { serverRows, settingText } from "../bundle/project_trust.js";
import { decisions, fakeModel, mount } from "./fake_model.js";

const REQUEST = {
  root: "/home/me/repo",
  changed: false,
  items: [
    { kind: "server", file: ".mcp.json", key: "x", value: { command: "sh", args: ["-c", "echo hi > victim"], env: ["TOKEN"] } },
    { kind: "setting", file: ".agent_ext/settings.json", key: "permissions.allow", value: "Bash" },
    { kind: "setting", file: ".agent_ext/settings.json", key: "hooks", value: { PreToolUse: [] } },
  ],
  narrowing: ["deny: Bash(rm *) (.agent_ext/settings.json)"],
};

/** @param {Record<string, any>} [request] */
function setup(request = REQUEST) {
  const model = fakeModel({ request, decision: {}, status: "pending" });
  const { el } = mount(widget, model);
  return { model, el };
}

/** @param {HTMLElement} el @param {string} label */
function buttonNamed(el, label) {
  return /** @type {HTMLButtonElement} */ (Array.from(el.querySelectorAll("button")).find((b) => b.textContent === label));
}

describe("project_trust", () => {
  it("shows every server and setting with its file, names of env variables only", () => {
    const { model, el } = setup();
    expect(model.sent).toEqual([{ type: "ready" }]);
    const text = el.textContent ?? "";
    expect(text).toContain("MCP servers it would start (1)");
    expect(text).toContain('"-c" "echo hi > victim"');
    expect(text).toContain("env names");
    expect(text).toContain("TOKEN");
    expect(text).toContain("permissions.allow");
    expect(text).toContain("in .agent_ext/settings.json");
    expect(text).toContain('{"PreToolUse":[]}');
    expect(text).toContain("Applied already");
    expect(el.querySelector('[role="group"]')?.getAttribute("aria-labelledby")).toBeTruthy();
  });

  it("sends one answer from a keyboard-reachable button, then locks", () => {
    const { model, el } = setup();
    const buttons = Array.from(el.querySelectorAll("button"));
    expect(buttons.map((b) => b.textContent)).toEqual(["Trust", "Trust once", "Don't trust"]);
    expect(buttons.every((b) => b.type === "button" && b.tabIndex >= 0)).toBe(true);
    buttonNamed(el, "Don't trust").click();
    buttonNamed(el, "Trust").click();
    expect(decisions(model)).toEqual([{ type: "answer", answer: "distrust" }]);
    expect(buttons.every((b) => b.disabled)).toBe(true);
    expect(el.querySelector(".ae-trust-status")?.textContent).toContain("Not trusted");
  });

  it("shows the kernel's decision and a withdrawn question", () => {
    const { model, el } = setup({ ...REQUEST, changed: true });
    expect(el.textContent).toContain("its files changed since you last answered");
    model.set("decision", { answer: "once" });
    model.set("status", "decided");
    expect(el.querySelector(".ae-trust-status")?.textContent).toContain("this session only");
    const other = setup();
    other.model.set("status", "cancelled");
    expect(other.el.querySelector(".ae-trust-status")?.textContent).toContain("nothing was trusted");
    expect(decisions(other.model)).toEqual([]);
  });

  it("renders odd entries without failing", () => {
    expect(serverRows({ url: "https://x", headers: [], timeout: 5 })).toEqual([["url", "https://x"], ["headers names", "(none)"], ["timeout", "5"]]);
    expect(serverRows(/** @type {any} */ ("nope"))).toEqual([["entry", '"nope"']]);
    expect(settingText(["a"])).toBe('["a"]');
    const { el } = setup({ items: "bad" });
    expect(el.querySelectorAll("button").length).toBe(3);
  });
});
