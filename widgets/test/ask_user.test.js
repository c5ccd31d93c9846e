import { describe, expect, it } from "vitest";
import widget, { describeAnswer } from "../bundle/ask_user.js";
import { decisions, fakeModel, mount, press } from "./fake_model.js";

/** @param {Record<string, any>} question */
function setup(question) {
  const model = fakeModel({ question, answer: {}, status: "pending" });
  const { el } = mount(widget, model);
  return { model, el };
}

const QUESTION = {
  question: "Which database should the service use?",
  options: [
    { label: "SQLite", description: "A file next to the code" },
    { label: "Postgres", description: "The team's server" },
  ],
  multi_select: false,
  allow_text: true,
};

describe("ask_user", () => {
  it("asks with radio options and sends the answer once", () => {
    const { model, el } = setup(QUESTION);
    expect(model.sent).toEqual([{ type: "ready" }]);
    expect(el.querySelector("legend")?.textContent).toBe(QUESTION.question);
    const radios = /** @type {HTMLInputElement[]} */ (Array.from(el.querySelectorAll("input[type=radio]")));
    expect(radios.length).toBe(2);
    expect(el.querySelector('[role="radiogroup"]')).not.toBeNull();
    expect(radios[1]?.getAttribute("aria-describedby")).toBeTruthy();
    const send = /** @type {HTMLButtonElement} */ (el.querySelector("button[type=submit]"));
    expect(send.disabled).toBe(true);
    /** @type {HTMLInputElement} */ (radios[1]).checked = true;
    radios[1]?.dispatchEvent(new Event("change", { bubbles: true }));
    expect(send.disabled).toBe(false);
    const text = /** @type {HTMLTextAreaElement} */ (el.querySelector("textarea"));
    text.value = " with read replicas ";
    send.click();
    send.click();
    expect(decisions(model)).toEqual([{ type: "answer", choices: ["Postgres"], text: "with read replicas" }]);
    expect(el.querySelector(".ae-ask-answer")?.textContent).toBe("You answered: Postgres \u2014 \u201cwith read replicas\u201d");
    expect(send.disabled).toBe(true);
    expect(radios[0]?.disabled).toBe(true);
  });

  it("takes several choices when the question allows it", () => {
    const { model, el } = setup({ ...QUESTION, multi_select: true, allow_text: false });
    const boxes = /** @type {HTMLInputElement[]} */ (Array.from(el.querySelectorAll("input[type=checkbox]")));
    expect(el.querySelector("textarea")).toBeNull();
    for (const box of boxes) box.checked = true;
    press(/** @type {Element} */ (boxes[0]), "Enter", { ctrlKey: true });
    expect(decisions(model)).toEqual([{ type: "answer", choices: ["SQLite", "Postgres"], text: "" }]);
  });

  it("takes free text alone when there are no options", () => {
    const { model, el } = setup({ question: "What should the report be called?", options: [] });
    expect(el.querySelector("label")?.textContent).toBe("Your answer");
    const text = /** @type {HTMLTextAreaElement} */ (el.querySelector("textarea"));
    text.value = "Quarterly numbers";
    text.dispatchEvent(new Event("input", { bubbles: true }));
    /** @type {HTMLFormElement} */ (el.querySelector("form")).requestSubmit();
    expect(decisions(model)).toEqual([{ type: "answer", choices: [], text: "Quarterly numbers" }]);
  });

  it("shows an answer or a withdrawal set by Python", () => {
    const { model, el } = setup(QUESTION);
    model.set("answer", { choices: ["SQLite"], text: "" });
    model.set("status", "answered");
    expect(el.querySelector(".ae-ask-answer")?.textContent).toBe("You answered: SQLite");
    expect(/** @type {HTMLInputElement} */ (el.querySelector("input[value=SQLite]")).checked).toBe(true);
    const other = setup(QUESTION);
    other.model.set("status", "cancelled");
    expect(other.el.querySelector(".ae-ask-answer")?.textContent).toContain("no longer waiting for you");
    expect(decisions(other.model)).toEqual([]);
  });

  it("keeps the question text as text", () => {
    const { el } = setup({ question: "<img src=x onerror=alert(1)>", options: [{ label: "<b>x</b>" }] });
    expect(el.querySelector("img")).toBeNull();
    expect(el.querySelector("b")).toBeNull();
  });

  it("words answers", () => {
    expect(describeAnswer({ choices: [], text: "" })).toBe("You answered without choosing anything.");
  });
});
