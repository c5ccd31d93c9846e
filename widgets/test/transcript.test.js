import { describe, expect, it } from "vitest";
import widget, { groupLabel } from "../bundle/transcript.js";
import { fakeModel, mount } from "./fake_model.js";

/** @param {Partial<TranscriptItem> & {id: number, kind: TranscriptItem["kind"]}} item @returns {TranscriptItem} */
const item = (item) => ({ rev: 0, ...item });

/** @param {TranscriptItem[]} items */
function setup(items = []) {
  const model = fakeModel({ items, usage: {}, status: "running" });
  const { el } = mount(widget, model);
  return { model, el };
}

/** @param {Element} el @param {number} id @returns {HTMLElement} */
const nodeOf = (el, id) => /** @type {HTMLElement} */ (el.querySelector(`[data-item-id="${id}"]`));

describe("transcript", () => {
  it("says it is ready and renders assistant text as Markdown", () => {
    const { model, el } = setup([
      item({ id: 1, kind: "run", model: "demo" }),
      item({ id: 2, kind: "text", text: "## Plan\n\nI will **fix** the `add` function:\n\n- read it\n- edit it\n\n```python\ndef add(a, b):\n    return a + b\n```" }),
    ]);
    expect(model.sent).toEqual([{ type: "ready" }]);
    const text = nodeOf(el, 2);
    expect(text.querySelector("h4")?.textContent).toBe("Plan");
    expect(text.querySelector("strong")?.textContent).toBe("fix");
    expect(text.querySelector("code.ae-md-code")?.textContent).toBe("add");
    expect(Array.from(text.querySelectorAll("li")).map((li) => li.textContent)).toEqual(["read it", "edit it"]);
    expect(text.querySelector("pre .ae-tok-keyword")?.textContent).toBe("def");
    expect(el.querySelector(".ae-run .ae-badge")?.textContent).toBe("demo");
  });

  it("patches only the items that changed and keeps the others' nodes", () => {
    const first = [
      item({ id: 1, kind: "text", text: "Hello" }),
      item({ id: 2, kind: "tool", name: "bash", title: "bash: ls", status: "running" }),
    ];
    const { model, el } = setup(first);
    const textNode = nodeOf(el, 1);
    const toolNode = /** @type {HTMLDetailsElement} */ (nodeOf(el, 2));
    toolNode.open = true;
    const textChild = textNode.firstChild;
    model.set("items", [
      first[0],
      { ...first[1], rev: 1, status: "done", seconds: 0.25, preview: "a.py\nb.py" },
      item({ id: 3, kind: "text", text: "Done." }),
    ]);
    expect(nodeOf(el, 1)).toBe(textNode);
    expect(textNode.firstChild).toBe(textChild);
    expect(nodeOf(el, 2)).toBe(toolNode);
    expect(toolNode.open).toBe(true);
    expect(toolNode.className).toContain("ae-status-done");
    expect(toolNode.querySelector(".ae-status")?.textContent).toBe("done");
    expect(toolNode.querySelector(".ae-duration")?.textContent).toBe("250 ms");
    expect(toolNode.querySelector(".ae-preview")?.textContent).toBe("a.py\nb.py");
    expect(nodeOf(el, 3).textContent).toBe("Done.");
    model.set("items", [first[0], { ...first[1], rev: 1, status: "done" }, item({ id: 3, kind: "text", rev: 1, text: "Done, twice." })]);
    expect(nodeOf(el, 2)).toBe(toolNode);
    expect(nodeOf(el, 3).textContent).toBe("Done, twice.");
  });

  it("groups consecutive reads and searches into one card", () => {
    const reads = [1, 2, 3].map((id) => item({ id, kind: "tool", name: "read_file", title: `read f${id}.py`, status: "done", group: "read", seconds: 0.1 }));
    const { model, el } = setup([...reads]);
    const groups = el.querySelectorAll("details.ae-group");
    expect(groups.length).toBe(1);
    expect(groups[0]?.querySelector(".ae-group-label")?.textContent).toBe("Read 3 files");
    expect(groups[0]?.querySelectorAll("details.ae-tool").length).toBe(3);
    model.set("items", [...reads, item({ id: 4, kind: "tool", name: "grep", status: "running", group: "search" })]);
    expect(el.querySelectorAll("details.ae-group").length).toBe(1);
    expect(el.querySelector(".ae-group-label")?.textContent).toBe("Read 3 files, ran 1 search");
    expect(el.querySelector(".ae-group > summary .ae-status")?.textContent).toBe("running");
    model.set("items", [...reads, item({ id: 4, kind: "tool", name: "grep", status: "done", group: "search", rev: 1 }),
      item({ id: 5, kind: "text", text: "Found it." }),
      item({ id: 6, kind: "tool", name: "read_file", status: "done", group: "read" }),
      item({ id: 7, kind: "tool", name: "edit_file", status: "done" }),
      item({ id: 8, kind: "tool", name: "read_file", status: "error", group: "read" }),
    ]);
    expect(el.querySelector(".ae-group > summary .ae-status")?.textContent).toBe("done");
    expect(el.querySelectorAll("details.ae-group").length).toBe(1);
    expect(nodeOf(el, 6).parentElement?.classList.contains("ae-log")).toBe(true);
    expect(nodeOf(el, 8).parentElement?.classList.contains("ae-log")).toBe(true);
  });

  it("keeps an XSS attempt in model text as text", () => {
    const { el } = setup([item({
      id: 1, kind: "text",
      text: "<script>alert(1)</script> <img src=x onerror=alert(2)> [click](javascript:alert(3)) [ok](https://example.com/a?b=1) **<b>bold</b>**",
    })]);
    const text = nodeOf(el, 1);
    expect(text.querySelector("script")).toBeNull();
    expect(text.querySelector("img")).toBeNull();
    expect(text.querySelector("b")).toBeNull();
    expect(text.textContent).toContain("<script>alert(1)</script>");
    const links = Array.from(text.querySelectorAll("a"));
    expect(links.map((a) => a.getAttribute("href"))).toEqual(["https://example.com/a?b=1"]);
    expect(links[0]?.getAttribute("rel")).toContain("noopener");
    expect(text.textContent).toContain("click (javascript:alert(3))");
    expect(text.querySelector("strong")?.textContent).toBe("<b>bold</b>");
  });

  it("pins the latest todo list and shows it in the todo_write card", () => {
    const todos = [
      { content: "Read the code", status: "completed" },
      { content: "Fix the bug", status: "in_progress" },
      { content: "Run the tests", status: "pending" },
    ];
    const { model, el } = setup([item({ id: 1, kind: "tool", name: "todo_write", status: "done", todos: /** @type {TodoEntry[]} */ (todos) })]);
    const plan = /** @type {HTMLElement} */ (el.querySelector(".ae-plan"));
    expect(plan.hidden).toBe(false);
    expect(plan.querySelector(".ae-plan-title")?.textContent).toBe("Plan \u00b7 1 of 3 done");
    expect(Array.from(plan.querySelectorAll(".ae-todo")).map((li) => li.className)).toEqual([
      "ae-todo ae-todo-completed", "ae-todo ae-todo-in_progress", "ae-todo ae-todo-pending",
    ]);
    expect(plan.querySelector(".ae-todo-in_progress")?.textContent).toContain("in progress: Fix the bug");
    expect(nodeOf(el, 1).querySelectorAll(".ae-todo").length).toBe(3);
    const later = todos.map((t) => ({ ...t, status: "completed" }));
    model.set("items", [model.get("items")[0], item({ id: 2, kind: "tool", name: "todo_write", status: "done", todos: /** @type {TodoEntry[]} */ (later) })]);
    expect(plan.querySelector(".ae-plan-title")?.textContent).toBe("Plan \u00b7 3 of 3 done");
  });

  it("collapses reasoning, shows notices, usage and the run status", () => {
    const { model, el } = setup([
      item({ id: 1, kind: "reasoning", text: "The user wants a fix." }),
      item({ id: 2, kind: "notice", level: "warning", text: "The run reached max_turns." }),
    ]);
    const reasoning = /** @type {HTMLDetailsElement} */ (nodeOf(el, 1));
    expect(reasoning.tagName).toBe("DETAILS");
    expect(reasoning.open).toBe(false);
    expect(reasoning.querySelector("summary")?.textContent).toBe("Reasoning (5 words)");
    expect(nodeOf(el, 2).className).toBe("ae-notice ae-notice-warning");
    expect(el.querySelector(".ae-run-status")?.textContent).toBe("Running\u2026");
    expect(el.querySelector(".ae-log")?.getAttribute("aria-busy")).toBe("true");
    model.set("usage", { input_tokens: 12345, output_tokens: 678, estimated: true, cost: 0.01234 });
    expect(el.querySelector(".ae-usage")?.textContent).toBe("~12,345 tokens in \u00b7 ~678 out \u00b7 $0.0123");
    model.set("status", "error");
    expect(el.querySelector(".ae-run-status")?.textContent).toBe("Stopped by an error");
    expect(el.querySelector(".ae-log")?.getAttribute("aria-busy")).toBe("false");
  });

  it("shows how to choose a model as a setup notice with the commands as code", () => {
    const { el } = setup([
      item({ id: 1, kind: "notice", level: "setup", text: "No model: type `%agent key openai`, then `%agent model openai:gpt-4o`." }),
    ]);
    const node = nodeOf(el, 1);
    expect(node.className).toBe("ae-notice ae-notice-setup");
    expect(Array.from(node.querySelectorAll("code")).map((c) => c.textContent)).toEqual(["%agent key openai", "%agent model openai:gpt-4o"]);
    expect(node.textContent).toBe("No model: type %agent key openai, then %agent model openai:gpt-4o.");
  });

  it("shows an edit a mode allowed with its line in the summary and its diff in the closed card", () => {
    const { el } = setup([
      item({ id: 1, kind: "tool", name: "edit", status: "done", title: "edit src/calc.py", allowed: "allowed by mode acceptEdits", diff: "--- a\n+++ b\n@@ -1 +1 @@\n-a - b\n+a + b\n" }),
    ]);
    const card = /** @type {HTMLDetailsElement} */ (nodeOf(el, 1));
    expect(card.open).toBe(false);
    expect(card.querySelector("summary .ae-allowed")?.textContent).toBe("allowed by mode acceptEdits");
    expect(Array.from(card.querySelectorAll(".ae-diffline-add")).map((n) => n.textContent)).toEqual(["+a + b\n"]);
    expect(card.querySelector(".ae-diffline-del")?.textContent).toBe("-a - b\n");
  });

  it("shows denials, errors and live output on tool cards", () => {
    const { el } = setup([
      item({ id: 1, kind: "tool", name: "bash", status: "denied", error: "The user rejected bash: rm -rf /", reason: "rm is not allowed" }),
      item({ id: 2, kind: "tool", name: "bash", status: "running", output: "step 1\nstep 2", args: '{"command": "make"}' }),
    ]);
    expect(nodeOf(el, 1).querySelector(".ae-tool-error")?.textContent).toBe("The user rejected bash: rm -rf /");
    expect(nodeOf(el, 1).querySelector(".ae-tool-reason")?.textContent).toContain("rm is not allowed");
    expect(nodeOf(el, 2).querySelector(".ae-output")?.textContent).toBe("step 1\nstep 2");
    expect(nodeOf(el, 2).querySelector(".ae-tok-property")?.textContent).toBe('"command"');
  });

  it("starts over when Python replaces the items", () => {
    const { model, el } = setup([item({ id: 1, kind: "text", text: "old" }), item({ id: 2, kind: "text", text: "older" })]);
    model.set("items", [item({ id: 10, kind: "text", text: "new" })]);
    expect(el.querySelectorAll("[data-item-id]").length).toBe(1);
    expect(nodeOf(el, 10).textContent).toBe("new");
  });

  it("renders a long run without rebuilding earlier items on each append", () => {
    /** @type {TranscriptItem[]} */
    const items = [];
    const { model, el } = setup(items);
    for (let id = 1; id <= 400; id++) {
      items.push(item({ id, kind: id % 2 ? "text" : "tool", text: `step ${id}`, name: "bash", status: "done" }));
      model.set("items", [...items]);
    }
    const first = nodeOf(el, 1);
    items.push(item({ id: 401, kind: "text", text: "end" }));
    model.set("items", [...items]);
    expect(nodeOf(el, 1)).toBe(first);
    expect(el.querySelectorAll("[data-item-id]").length).toBe(401);
  });

  it("labels groups", () => {
    expect(groupLabel([item({ id: 1, kind: "tool", group: "search" })])).toBe("Ran 1 search");
    expect(groupLabel([item({ id: 1, kind: "tool", group: "read" }), item({ id: 2, kind: "tool", group: "read" })])).toBe("Read 2 files");
  });
});
