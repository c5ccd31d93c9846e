import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import widget, { badges } from "../bundle/tool_catalogue.js";
import { buttonNamed, decisions, fakeModel, mount, press } from "./fake_model.js";

/** @param {Partial<ToolSummary> & {name: string}} tool @returns {ToolSummary} */
const summary = (tool) => ({
  description: `The ${tool.name} tool.`, deferred: false, revealed: false, disabled: false, read_only: false, ...tool,
});

const TOOLS = [
  summary({ name: "read_file", description: "Read a file.\nMore detail.", read_only: true }),
  summary({ name: "mcp__github__create_pull_request", server: "github", description: "Open a pull request.", deferred: true }),
  summary({ name: "mcp__github__list_issues", server: "github", deferred: true, revealed: true }),
  summary({ name: "legacy_tool", disabled: true }),
];

function setup() {
  const model = fakeModel({ tools: TOOLS, results: [], results_for: "", selected_schema: {}, message: "" });
  const { el } = mount(widget, model);
  return { model, el };
}

/** @param {Element} el */
const rowNames = (el) => Array.from(el.querySelectorAll(".ae-cat-row")).map((r) => r.querySelector(".ae-cat-name")?.textContent);

beforeEach(() => { vi.useFakeTimers(); });
afterEach(() => { vi.useRealTimers(); });

describe("tool_catalogue", () => {
  it("says it is ready and lists every tool with its badges", () => {
    const { model, el } = setup();
    expect(model.sent).toEqual([{ type: "ready" }]);
    expect(rowNames(el)).toEqual(TOOLS.map((t) => t.name));
    expect(el.querySelector(".ae-cat-count")?.textContent).toBe("4 tools \u00b7 2 deferred");
    const rows = Array.from(el.querySelectorAll(".ae-cat-row"));
    const badgeTexts = rows.map((r) => Array.from(r.querySelectorAll(".ae-badge")).map((b) => b.textContent));
    expect(badgeTexts).toEqual([["read-only"], ["github", "deferred"], ["github", "revealed"], ["disabled"]]);
    expect(rows[0]?.querySelector(".ae-cat-desc")?.textContent).toBe("Read a file.");
  });

  it("sends searches to Python and lists the answer in rank order", () => {
    const { model, el } = setup();
    const search = /** @type {HTMLInputElement} */ (el.querySelector("input[type=search]"));
    search.value = "pull req";
    search.dispatchEvent(new Event("input"));
    search.value = "pull request";
    search.dispatchEvent(new Event("input"));
    expect(decisions(model)).toEqual([]);
    vi.advanceTimersByTime(200);
    expect(decisions(model)).toEqual([{ type: "search", query: "pull request" }]);
    expect(el.querySelector(".ae-cat-count")?.textContent).toBe("Searching\u2026");
    model.set("results", ["mcp__github__list_issues", "mcp__github__create_pull_request", "gone_tool"]);
    expect(el.querySelector(".ae-cat-count")?.textContent).toBe("Searching\u2026");
    model.set("results_for", "pull request");
    expect(rowNames(el)).toEqual(["mcp__github__list_issues", "mcp__github__create_pull_request"]);
    expect(el.querySelector(".ae-cat-count")?.textContent).toBe("2 of 4 tools match");
    press(search, "Escape");
    expect(search.value).toBe("");
    expect(rowNames(el).length).toBe(4);
  });

  it("shows the schema of the chosen tool once Python sends it", () => {
    const { model, el } = setup();
    const row = /** @type {HTMLButtonElement} */ (el.querySelectorAll(".ae-cat-row")[1]);
    row.click();
    expect(decisions(model)).toEqual([{ type: "select", name: "mcp__github__create_pull_request" }]);
    expect(el.querySelector(".ae-cat-detail")?.textContent).toContain("Loading the schema");
    expect(el.querySelector('.ae-cat-row[aria-current="true"]')?.textContent).toContain("create_pull_request");
    model.set("selected_schema", {
      name: "mcp__github__create_pull_request", description: "Open a pull request.\n\nNeeds a branch.",
      parameters: { type: "object", properties: { title: { type: "string" } } },
    });
    const detail = /** @type {HTMLElement} */ (el.querySelector(".ae-cat-detail"));
    expect(detail.querySelector(".ae-cat-full")?.textContent).toBe("Open a pull request.\n\nNeeds a branch.");
    expect(detail.querySelector("pre")?.textContent).toContain('"title"');
    expect(detail.querySelector(".ae-tok-property")?.textContent).toBe('"type"');
  });

  it("reveals, hides, disables and enables through messages", () => {
    const { model, el } = setup();
    /** @type {HTMLButtonElement} */ (el.querySelectorAll(".ae-cat-row")[1]).click();
    const detail = /** @type {HTMLElement} */ (el.querySelector(".ae-cat-detail"));
    buttonNamed(detail, "Reveal to the agent").click();
    model.set("tools", TOOLS.map((t) => (t.name === "mcp__github__create_pull_request" ? { ...t, revealed: true } : t)));
    buttonNamed(detail, "Hide from the agent").click();
    buttonNamed(detail, "Disable").click();
    model.set("tools", TOOLS.map((t) => (t.name === "mcp__github__create_pull_request" ? { ...t, disabled: true } : t)));
    buttonNamed(detail, "Enable").click();
    const name = "mcp__github__create_pull_request";
    expect(decisions(model).slice(1)).toEqual([
      { type: "reveal", name }, { type: "unreveal", name }, { type: "disable", name }, { type: "enable", name },
    ]);
    expect(() => buttonNamed(detail, "Reveal to the agent")).not.toThrow();
  });

  it("offers no reveal toggle for a tool that is always sent", () => {
    const { el } = setup();
    /** @type {HTMLButtonElement} */ (el.querySelectorAll(".ae-cat-row")[0]).click();
    const detail = /** @type {HTMLElement} */ (el.querySelector(".ae-cat-detail"));
    expect(() => buttonNamed(detail, "Reveal to the agent")).toThrow();
    expect(() => buttonNamed(detail, "Disable")).not.toThrow();
  });

  it("moves through the list with the arrow keys and keeps focus across updates", () => {
    const { model, el } = setup();
    const search = /** @type {HTMLInputElement} */ (el.querySelector("input[type=search]"));
    search.focus();
    press(search, "ArrowDown");
    const rows = () => Array.from(el.querySelectorAll(".ae-cat-row"));
    expect(document.activeElement).toBe(rows()[0]);
    press(/** @type {Element} */ (rows()[0]), "ArrowDown");
    expect(document.activeElement).toBe(rows()[1]);
    model.set("tools", [...TOOLS]);
    expect(/** @type {HTMLElement} */ (document.activeElement).dataset["tool"]).toBe("mcp__github__create_pull_request");
  });

  it("shows what Python reports back", () => {
    const { model, el } = setup();
    model.set("message", "Could not reveal nope: no tool named 'nope'");
    const message = /** @type {HTMLElement} */ (el.querySelector(".ae-cat-message"));
    expect(message.hidden).toBe(false);
    expect(message.textContent).toContain("no tool named");
  });

  it("badges hidden and broken tools", () => {
    const texts = badges(summary({ name: "x", hidden: true, error: "ImportError" })).map((b) => b.textContent);
    expect(texts).toEqual(["hidden by a rule", "failed to load"]);
  });
});
