import { beforeEach, describe, expect, it } from "vitest";
import widget, { describeDecision, scopeLabel } from "../bundle/confirm_diff.js";
import { buttonNamed, decisions, fakeModel, mount, press } from "./fake_model.js";

const ORIGINAL = "def add(a, b):\n    return a + b\n\nprint(add(1, 2))\n";
const PROPOSED = "def add(a, b):\n    \"\"\"Add two numbers.\"\"\"\n    return a + b\n\nprint(add(2, 3))\n";

/** @param {Record<string, any>} [details] @param {Record<string, any>} [request] */
function editRequest(details = {}, request = {}) {
  return {
    call_id: "c1",
    tool_name: "edit_file",
    reason: "edits need your approval in default mode",
    scopes: ["file", "tool"],
    details: {
      kind: "edit", title: "Edit src/calc.py?", summary: "Add a docstring",
      tool_name: "edit_file", file_path: "src/calc.py", diff: null,
      original: ORIGINAL, proposed: PROPOSED, command: null, extra: {},
      ...details,
    },
    ...request,
  };
}

/** @param {Record<string, any>} [request] */
function setup(request = editRequest()) {
  const model = fakeModel({ request, decision: {}, status: "pending" });
  const { el } = mount(widget, model);
  return { model, el };
}

beforeEach(() => {
  localStorage.clear();
});

describe("confirm_diff", () => {
  it("says it is ready and shows the proposal, the reason and the stats", () => {
    const { model, el } = setup();
    expect(model.sent[0]).toEqual({ type: "ready" });
    expect(el.querySelector(".ae-confirm-title")?.textContent).toBe("Edit src/calc.py?");
    expect(el.querySelector(".ae-target")?.textContent).toBe("src/calc.py");
    expect(el.querySelector(".ae-confirm-reason")?.textContent).toContain("edits need your approval in default mode");
    expect(el.querySelector(".ae-stats")?.textContent).toBe("+2 \u22121");
    const added = Array.from(el.querySelectorAll("tr.ae-diff-add")).map((tr) => tr.textContent);
    expect(added.some((t) => t?.includes('"""Add two numbers."""'))).toBe(true);
    const firstNumbers = el.querySelector("tr.ae-diff-line")?.querySelectorAll(".ae-diff-no");
    expect(firstNumbers?.[0]?.textContent).toBe("1");
    expect(el.querySelector(".ae-tok-keyword")?.textContent).toBe("def");
    expect(el.querySelector(".ae-tok-string")?.textContent).toBe('"""Add two numbers."""');
  });

  it("approves once and then shows the decision without taking more clicks", () => {
    const { model, el } = setup();
    const approve = buttonNamed(el, "Approve");
    approve.click();
    approve.click();
    press(el.querySelector("section") ?? el, "a");
    expect(decisions(model)).toEqual([
      { type: "decision", outcome: "approve", modified: null, feedback: null, scope: null, persist: "session" },
    ]);
    expect(approve.disabled).toBe(true);
    expect(el.querySelector(".ae-actions")?.hasAttribute("hidden")).toBe(true);
    expect(el.querySelector(".ae-outcome")?.textContent).toContain("You approved this.");
    expect(el.classList.contains("ae-decided-approve")).toBe(true);
  });

  it("rejects with feedback from the revealed box", () => {
    const { model, el } = setup();
    const feedbackBox = /** @type {HTMLTextAreaElement} */ (el.querySelector(".ae-feedback"));
    expect(feedbackBox.closest(".ae-panel")?.hasAttribute("hidden")).toBe(true);
    buttonNamed(el, "Reject\u2026").click();
    expect(feedbackBox.closest(".ae-panel")?.hasAttribute("hidden")).toBe(false);
    expect(document.activeElement).toBe(feedbackBox);
    feedbackBox.value = "  use a type hint instead  ";
    buttonNamed(/** @type {HTMLElement} */ (feedbackBox.closest(".ae-panel")), "Reject").click();
    expect(decisions(model)).toEqual([{
      type: "decision", outcome: "reject", modified: null,
      feedback: "use a type hint instead", scope: null, persist: "session",
    }]);
    expect(el.querySelector(".ae-outcome")?.textContent).toContain("use a type hint instead");
  });

  it("rejects without feedback as null", () => {
    const { model, el } = setup();
    press(el.querySelector("section") ?? el, "r");
    const box = /** @type {HTMLTextAreaElement} */ (el.querySelector(".ae-feedback"));
    press(box, "Enter", { ctrlKey: true });
    expect(decisions(model)[0]).toMatchObject({ outcome: "reject", feedback: null });
  });

  it("edits, then approves the user's version and counts lines by the agent and by you", () => {
    const { model, el } = setup();
    press(el.querySelector("section") ?? el, "e");
    const editor = /** @type {HTMLTextAreaElement} */ (el.querySelector(".ae-editor"));
    expect(document.activeElement).toBe(editor);
    expect(editor.value).toBe(PROPOSED);
    editor.value = `${PROPOSED}# checked\n`;
    editor.dispatchEvent(new Event("input", { bubbles: true }));
    expect(el.querySelector(".ae-stats")?.textContent).toBe("+2 \u22121 by the agent, +1 by you");
    press(editor, "a");
    expect(decisions(model)).toEqual([]);
    buttonNamed(el, "Approve your version").click();
    expect(decisions(model)).toEqual([{
      type: "decision", outcome: "approve", modified: `${PROPOSED}# checked\n`,
      feedback: null, scope: null, persist: "session",
    }]);
    expect(el.querySelector(".ae-outcome")?.textContent).toContain("+2 \u22121 by the agent, +1 by you");
    expect(editor.disabled).toBe(true);
  });

  it("sends no modification when the edit leaves the proposal as it was", () => {
    const { model, el } = setup();
    buttonNamed(el, "Edit, then approve\u2026").click();
    const editor = /** @type {HTMLTextAreaElement} */ (el.querySelector(".ae-editor"));
    press(editor, "Enter", { ctrlKey: true });
    expect(decisions(model)[0]).toMatchObject({ outcome: "approve", modified: null });
  });

  it("goes back with Escape and returns focus to the button that opened the panel", () => {
    const { model, el } = setup();
    const opener = buttonNamed(el, "Edit, then approve\u2026");
    opener.click();
    const editor = /** @type {HTMLTextAreaElement} */ (el.querySelector(".ae-editor"));
    const left = press(editor, "Escape");
    expect(left).toBe(false);
    expect(editor.closest(".ae-panel")?.hasAttribute("hidden")).toBe(true);
    expect(el.querySelector(".ae-actions")?.hasAttribute("hidden")).toBe(false);
    expect(document.activeElement).toBe(opener);
    expect(decisions(model)).toEqual([]);
  });

  it("always allows with the chosen scope and where to remember it", () => {
    const { model, el } = setup();
    buttonNamed(el, "Always allow\u2026").click();
    const labels = Array.from(el.querySelectorAll(".ae-fieldset label")).map((l) => l.textContent);
    expect(labels).toEqual(["edit_file on src/calc.py", "every edit_file call", "For this session",
      "For this project (saved in its settings)"]);
    const radios = /** @type {HTMLInputElement[]} */ (Array.from(el.querySelectorAll("input[type=radio]")));
    expect(radios[0]?.checked).toBe(true);
    /** @type {HTMLInputElement} */ (radios[1]).checked = true;
    /** @type {HTMLInputElement} */ (radios[3]).checked = true;
    buttonNamed(/** @type {HTMLElement} */ (radios[0]?.closest(".ae-panel")), "Always allow").click();
    expect(decisions(model)).toEqual([{
      type: "decision", outcome: "always", modified: null, feedback: null, scope: "tool", persist: "project",
    }]);
    expect(el.querySelector(".ae-outcome")?.textContent).toContain("every edit_file call in this project");
  });

  it("cancels the run", () => {
    const { model, el } = setup();
    buttonNamed(el, "Cancel run").click();
    expect(decisions(model)[0]).toMatchObject({ outcome: "cancel" });
    expect(el.querySelector(".ae-outcome")?.textContent).toContain("You cancelled the run.");
  });

  it("takes shortcuts only from its own keys, without modifiers, and stops them there", () => {
    const { model, el } = setup();
    const region = /** @type {HTMLElement} */ (el.querySelector("section"));
    expect(press(region, "a", { ctrlKey: true })).toBe(true);
    expect(press(region, "x")).toBe(true);
    expect(decisions(model)).toEqual([]);
    let reachedDocument = false;
    const spy = () => { reachedDocument = true; };
    document.addEventListener("keydown", spy);
    expect(press(region, "a")).toBe(false);
    document.removeEventListener("keydown", spy);
    expect(reachedDocument).toBe(false);
    expect(decisions(model)[0]).toMatchObject({ outcome: "approve" });
  });

  it("is keyboard operable and labelled", () => {
    const { el } = setup();
    expect(el.getAttribute("data-lm-suppress-shortcuts")).toBe("true");
    const region = /** @type {HTMLElement} */ (el.querySelector("section"));
    expect(region.getAttribute("role")).toBe("region");
    expect(region.getAttribute("tabindex")).toBe("0");
    const title = el.querySelector(`#${region.getAttribute("aria-labelledby")}`);
    expect(title?.textContent).toBe("Edit src/calc.py?");
    expect(el.querySelector(".ae-actions")?.getAttribute("role")).toBe("group");
    expect(buttonNamed(el, "Approve").getAttribute("aria-keyshortcuts")).toBe("a");
    expect(buttonNamed(el, "Reject\u2026").getAttribute("aria-keyshortcuts")).toBe("r");
    expect(buttonNamed(el, "Edit, then approve\u2026").getAttribute("aria-keyshortcuts")).toBe("e");
    for (const b of el.querySelectorAll("button")) expect(b.getAttribute("type")).toBe("button");
    expect(el.querySelector(".ae-outcome")?.getAttribute("role")).toBe("status");
  });

  it("switches between unified and side-by-side views and remembers the choice", () => {
    const { el } = setup();
    expect(el.querySelector("table.ae-diff-unified")).not.toBeNull();
    const split = buttonNamed(el, "Side by side");
    split.click();
    expect(split.getAttribute("aria-pressed")).toBe("true");
    const table = el.querySelector("table.ae-diff-split");
    expect(table).not.toBeNull();
    const changed = Array.from(table?.querySelectorAll("tr.ae-diff-line") ?? [])
      .find((tr) => tr.querySelector(".ae-diff-del"));
    expect(changed?.querySelector(".ae-diff-del")?.textContent).toBe("print(add(1, 2))");
    expect(changed?.querySelector(".ae-diff-add")?.textContent).toBe("print(add(2, 3))");
    expect(localStorage.getItem("agent_ext.diff_layout")).toBe("split");
    const again = setup();
    expect(again.el.querySelector("table.ae-diff-split")).not.toBeNull();
  });

  it("reads line numbers from a unified diff when one is given", () => {
    const diff = "--- a/app.js\n+++ b/app.js\n@@ -10,3 +10,3 @@ function main() {\n const a = 1;\n-let b = 2;\n+const b = 2;\n return a + b;\n";
    const { el } = setup(editRequest({ file_path: "app.js", diff, original: null, proposed: null }));
    const rows = Array.from(el.querySelectorAll("tr.ae-diff-line"));
    expect(rows.map((r) => Array.from(r.querySelectorAll(".ae-diff-no")).map((c) => c.textContent))).toEqual([
      ["10", "10"], ["11", ""], ["", "11"], ["12", "12"],
    ]);
    expect(el.querySelector(".ae-diff-hunk-header")?.textContent).toContain("@@ -10,3 +10,3 @@");
    expect(el.querySelector(".ae-tok-keyword")?.textContent).toBe("const");
    expect(() => buttonNamed(el, "Edit, then approve\u2026")).toThrow();
  });

  it("shows a shell command highlighted with the reason it asks, and no diff", () => {
    const request = {
      call_id: "c2", tool_name: "bash", reason: "rm is not on your allow list", scopes: ["command", "prefix", "tool"],
      details: {
        kind: "exec", title: "Run a command?", summary: "Remove the build folder", tool_name: "bash",
        command: "rm -rf $BUILD_DIR && echo done", proposed: null, extra: { cwd: "/work" },
      },
    };
    const { el } = setup(request);
    const command = el.querySelector(".ae-command");
    expect(command?.querySelector(".ae-tok-command")?.textContent).toBe("rm");
    expect(command?.querySelector(".ae-tok-property")?.textContent).toBe("-rf");
    expect(command?.querySelector(".ae-tok-variable")?.textContent).toBe("$BUILD_DIR");
    expect(command?.textContent).toContain("Runs in /work");
    expect(el.querySelector(".ae-confirm-reason")?.textContent).toContain("rm is not on your allow list");
    expect(el.querySelector("table")).toBeNull();
    expect(el.querySelector(".ae-stats")?.textContent).toBe("");
    expect(() => buttonNamed(el, "Edit, then approve\u2026")).toThrow();
  });

  it("shows a sed edit as its command and the file diff", () => {
    const { el } = setup(editRequest({ command: "sed -i 's/1, 2/2, 3/' src/calc.py" }));
    expect(el.querySelector(".ae-command")?.textContent).toContain("The command that makes this edit");
    expect(el.querySelector("table.ae-diff")).not.toBeNull();
  });

  it("names the notebook cell it edits and marks new cells", () => {
    const { el } = setup(editRequest({
      file_path: "analysis.ipynb", original: "x = 1", proposed: "x = 2",
      extra: { cell_id: "a1b2", cell_type: "code", notebook: "analysis.ipynb" },
    }));
    expect(el.querySelector(".ae-target")?.textContent).toBe("cell a1b2");
    const labelled = setup(editRequest({
      file_path: "analysis.ipynb", original: "x = 1", proposed: "x = 2",
      extra: { cell_id: "8c4b6d65-75f6", cell_label: "cell 5 \u00b7 [12] \u00b7 `x = 1`", cell_type: "code" },
    }));
    const shown = labelled.el.querySelector(".ae-target");
    expect(shown?.textContent).toBe("cell 5 \u00b7 [12] \u00b7 `x = 1`");
    expect(shown?.getAttribute("title")).toBe("cell id 8c4b6d65-75f6");
    /** @type {string[]} */
    const asked = [];
    labelled.el.addEventListener("agent-ext:reveal-cell", (event) => {
      asked.push(/** @type {CustomEvent} */ (event).detail.cellId);
      event.preventDefault();
    });
    const link = /** @type {HTMLElement} */ (labelled.el.querySelector(".ae-cell-link"));
    link.click();
    expect(asked).toEqual(["8c4b6d65-75f6"]);
    expect(link.title).toBe("Scroll the notebook to this cell");
    const alone = setup(editRequest({ original: "a", proposed: "b", extra: { cell_id: "q1" } }));
    const unanswered = /** @type {HTMLElement} */ (alone.el.querySelector(".ae-cell-link"));
    unanswered.click();
    expect(unanswered.title).toContain("extension is not running here");
    expect(Array.from(el.querySelectorAll(".ae-badge")).map((b) => b.textContent)).toContain("code");
    const added = setup(editRequest({
      file_path: "analysis.ipynb", original: "", proposed: "# Results\n\nIt **works**.",
      extra: { cell_type: "markdown", action: "insert" },
    }));
    const badgeTexts = Array.from(added.el.querySelectorAll(".ae-badge")).map((b) => b.textContent);
    expect(badgeTexts).toContain("new cell");
    expect(badgeTexts).toContain("markdown");
    expect(added.el.querySelector(".ae-tok-heading")?.textContent).toBe("# Results");
    const removed = setup(editRequest({ original: "x = 1\n", proposed: "", extra: { cell_id: "z9", action: "delete" } }));
    expect(Array.from(removed.el.querySelectorAll(".ae-badge")).map((b) => b.textContent)).toContain("delete cell");
  });

  it("shows a decision made elsewhere and locks itself", () => {
    const { model, el } = setup();
    model.set("decision", { outcome: "reject", by: "timeout", note: "No answer within 10 minutes; the call was rejected." });
    model.set("status", "decided");
    expect(el.querySelector(".ae-outcome")?.textContent).toContain("No answer within 10 minutes");
    expect(buttonNamed(el, "Approve").disabled).toBe(true);
    press(/** @type {HTMLElement} */ (el.querySelector("section")), "a");
    expect(decisions(model)).toEqual([]);
  });

  it("renders an already decided request as decided", () => {
    const model = fakeModel({
      request: editRequest(), status: "decided",
      decision: { outcome: "always", scope: "file", persist: "session", by: "user" },
    });
    const { el } = mount(widget, model);
    expect(el.querySelector(".ae-outcome")?.textContent).toContain("You always allow edit_file on src/calc.py for this session");
    expect(model.sent).toEqual([{ type: "ready" }]);
  });

  it("shows a withdrawn request", () => {
    const { model, el } = setup();
    model.set("status", "cancelled");
    expect(el.querySelector(".ae-outcome")?.textContent).toContain("no longer waiting for you");
  });

  it("words scopes and decisions", () => {
    expect(scopeLabel("tool", "bash", null)).toBe("every bash call");
    expect(scopeLabel("Bash(npm test:*)", "bash", null)).toBe("Bash(npm test:*)");
    expect(describeDecision({ outcome: "reject", by: "policy" }, "bash", null)).toBe("Rejected (policy).");
    expect(describeDecision({ outcome: "approve", edited: true, stats: "+1" }, "bash", null))
      .toBe("You approved your edited version (+1).");
  });

  it("keeps model text as text", () => {
    const { el } = setup(editRequest({ title: "<img src=x onerror=alert(1)>", proposed: "<script>alert(1)</script>\n" }));
    expect(el.querySelector("img")).toBeNull();
    expect(el.querySelector("script")).toBeNull();
    expect(el.querySelector(".ae-confirm-title")?.textContent).toBe("<img src=x onerror=alert(1)>");
  });

  it("removes its listeners when the view goes away", () => {
    const model = fakeModel({ request: editRequest(), decision: {}, status: "pending" });
    const { el, cleanup } = mount(widget, model);
    if (typeof cleanup === "function") cleanup();
    model.set("status", "cancelled");
    expect(el.querySelector(".ae-outcome")?.hasAttribute("hidden")).toBe(true);
  });
});
