import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import widget from "../bundle/confirm_diff.js";
import { buttonNamed, decisions, fakeModel, mount, press } from "./fake_model.js";

/** @param {string} id @param {string} cell */
function cellRequest(id, cell) {
  return {
    call_id: id, tool_name: "notebook_edit", reason: "edits need your approval", scopes: ["tool"],
    details: {
      kind: "edit", title: `Edit cell ${cell}`, summary: "", tool_name: "notebook_edit",
      file_path: "t.ipynb", diff: null, original: `${cell} = 1\n`, proposed: `${cell} = 42\n`,
      command: null, extra: { cell_id: cell, cell_type: "code", action: "edit" },
    },
  };
}

function group() {
  const model = fakeModel({
    requests: [cellRequest("ea", "a"), cellRequest("eb", "b"), cellRequest("ec", "c")],
    decisions: {}, decision: {}, status: "pending",
  });
  return { model, ...mount(widget, model) };
}

/**
 * A notebook as JupyterLab draws it: the widget in one cell's output, then a next cell.
 * @param {Record<string, any>} traits
 */
function inNotebook(traits) {
  document.body.replaceChildren();
  const notebook = document.createElement("div");
  notebook.className = "jp-Notebook";
  notebook.tabIndex = -1;
  const cell = document.createElement("div");
  cell.className = "jp-Cell";
  const el = document.createElement("div");
  cell.appendChild(el);
  const next = document.createElement("div");
  next.className = "jp-Cell";
  const prompt = document.createElement("div");
  prompt.className = "jp-InputPrompt";
  next.appendChild(prompt);
  const editor = document.createElement("textarea");
  notebook.append(cell, next, editor);
  document.body.appendChild(notebook);
  /** @type {string[]} */
  const pressed = [];
  prompt.addEventListener("mousedown", () => pressed.push("mousedown"));
  const model = fakeModel(traits);
  widget.render({ model, el });
  return { model, el, notebook, next, editor, pressed };
}

beforeEach(() => localStorage.clear());
afterEach(() => vi.useRealTimers());

describe("confirm_diff group", () => {
  it("shows one card per proposal under one bar", () => {
    const { el } = group();
    expect(el.querySelectorAll(".ae-card")).toHaveLength(3);
    expect(el.querySelector(".ae-group-title")?.textContent).toBe("The agent proposes 3 changes");
    expect(Array.from(el.querySelectorAll(".ae-confirm-title")).map((t) => t.textContent))
      .toEqual(["Edit cell a", "Edit cell b", "Edit cell c"]);
  });

  it("decides each card with its call id, and Approve all decides the rest", () => {
    const { model, el } = group();
    const second = /** @type {HTMLElement} */ (el.querySelectorAll(".ae-card")[1]);
    press(/** @type {HTMLElement} */ (second.querySelector("section")), "r");
    const box = /** @type {HTMLTextAreaElement} */ (second.querySelector(".ae-feedback"));
    box.value = "not b\nkeep it";
    press(box, "Enter", { ctrlKey: true });
    buttonNamed(el, "Approve all").click();
    expect(decisions(model).map((m) => [m.call_id, m.outcome, m.feedback])).toEqual([
      ["eb", "reject", "not b\nkeep it"], ["ea", "approve", null], ["ec", "approve", null],
    ]);
    expect(el.querySelectorAll(".ae-card.ae-decided")).toHaveLength(3);
    expect(buttonNamed(el, "Approve all").disabled).toBe(true);
    expect(el.querySelector(".ae-group-count")?.textContent).toBe("All decided.");
  });

  it("takes Shift+R as reject all, and a, r, e act on the card the key is pressed in", () => {
    const { model, el } = group();
    const third = /** @type {HTMLElement} */ (el.querySelectorAll(".ae-card")[2]?.querySelector("section"));
    expect(press(third, "a")).toBe(false);
    expect(decisions(model)).toEqual([expect.objectContaining({ call_id: "ec", outcome: "approve" })]);
    press(third, "R", { shiftKey: true });
    expect(decisions(model).slice(1).map((m) => [m.call_id, m.outcome])).toEqual([["ea", "reject"], ["eb", "reject"]]);
  });

  it("shows decisions the kernel made and withdraws the cards still pending", () => {
    const { model, el } = group();
    model.set("decisions", { ea: { outcome: "approve", by: "user" } });
    model.set("decision", { note: "Withdrawn: no page showed this request for 2 s." });
    model.set("status", "cancelled");
    const outcomes = Array.from(el.querySelectorAll(".ae-outcome")).map((o) => o.textContent);
    expect(outcomes[0]).toContain("You approved this.");
    expect(outcomes[1]).toContain("Withdrawn: no page showed this request");
    expect(outcomes[2]).toContain("Withdrawn: no page showed this request");
  });
});

describe("confirm_diff and the notebook's keyboard", () => {
  it("takes focus when it appears unless the user is typing elsewhere", async () => {
    const { el } = inNotebook({ request: cellRequest("c1", "a"), decision: {}, status: "pending" });
    await new Promise((r) => setTimeout(r, 5));
    expect(el.contains(document.activeElement)).toBe(true);

    const typing = inNotebook({ request: cellRequest("c1", "a"), decision: {}, status: "pending" });
    typing.editor.focus();
    await new Promise((r) => setTimeout(r, 5));
    expect(document.activeElement).toBe(typing.editor);
  });

  it("hands focus to the next cell after a decision", async () => {
    const { el, notebook, pressed } = inNotebook({ request: cellRequest("c1", "a"), decision: {}, status: "pending" });
    await new Promise((r) => setTimeout(r, 5));
    press(/** @type {HTMLElement} */ (document.activeElement), "a");
    expect(pressed).toEqual(["mousedown"]);
    expect(document.activeElement).toBe(notebook);
    expect(el.contains(document.activeElement)).toBe(false);
  });

  it("keeps its keys from the notebook's shortcuts and Enter in its text boxes", () => {
    const { el } = inNotebook({ request: cellRequest("c1", "a"), decision: {}, status: "pending" });
    /** @type {string[]} */
    const reached = [];
    const spy = (/** @type {KeyboardEvent} */ e) => reached.push(e.key);
    document.addEventListener("keydown", spy, true);
    try {
      const region = /** @type {HTMLElement} */ (el.querySelector("section"));
      press(region, "b");
      expect(region.getAttribute("data-lm-suppress-shortcuts")).toBe("true");
      press(region, "r");
      const box = /** @type {HTMLTextAreaElement} */ (el.querySelector(".ae-feedback"));
      press(box, "Enter");
      press(box, "z", { ctrlKey: true });
      const input = new InputEvent("beforeinput", { inputType: "insertLineBreak", bubbles: true, cancelable: true });
      let cancelled = false;
      box.addEventListener("beforeinput", (e) => { cancelled = e.defaultPrevented; e.preventDefault(); }, { once: true });
      box.dispatchEvent(input);
      expect(cancelled).toBe(false);
      expect(reached).toEqual(["b", "r"]); // Enter and Ctrl+Z stay in the text box
    } finally {
      document.removeEventListener("keydown", spy, true);
    }
  });

  it("beats while a decision is wanted, and stops once decided", () => {
    vi.useFakeTimers();
    const model = fakeModel({ request: cellRequest("c1", "a"), decision: {}, status: "pending", beat: 1 });
    const { el } = mount(widget, model);
    vi.advanceTimersByTime(3500);
    expect(model.sent.filter((m) => m.type === "alive")).toHaveLength(3);
    buttonNamed(el, "Approve").click();
    vi.advanceTimersByTime(5000);
    expect(model.sent.filter((m) => m.type === "alive")).toHaveLength(3);
  });
});
