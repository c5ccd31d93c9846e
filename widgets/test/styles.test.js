// Every widget's stylesheet starts with a copy of base.css, and a page keeps the stylesheets of
// all the widgets it shows. So a widget's own one-class rule that sets a property a base rule
// sets on the same element loses to the copy of base.css of whichever widget loads next: the
// rule must be more specific (`.ae-btn.ae-btn-small`) or set a custom property base.css reads.
import { readdirSync, readFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";

const SRC = join(dirname(fileURLToPath(import.meta.url)), "..", "src");
const ONE_CLASS = /^\.([\w-]+)$/;

/**
 * The properties each one-class selector of a stylesheet sets (custom properties left out).
 * @param {string} css
 * @returns {Map<string, Set<string>>}
 */
function oneClassRules(css) {
  /** @type {Map<string, Set<string>>} */
  const rules = new Map();
  for (const [, selectors = "", body = ""] of css.replace(/\/\*[\s\S]*?\*\//g, "").matchAll(/([^{}]+)\{([^{}]*)\}/g)) {
    const props = [...body.matchAll(/(?:^|;)\s*([a-z][\w-]*)\s*:/g)].map((m) => m[1] ?? "");
    for (const selector of selectors.split(",")) {
      const name = ONE_CLASS.exec(selector.trim())?.[1];
      if (!name) continue;
      const set = rules.get(name) ?? new Set();
      for (const prop of props) set.add(prop);
      rules.set(name, set);
    }
  }
  return rules;
}

/**
 * The class lists the widgets' code writes: every literal with two or more `ae-` classes, a
 * `${...}` part standing for any text; `cls:` options also carry the button's `ae-btn`.
 * @param {string} js
 * @returns {RegExp[][]}
 */
function classLists(js) {
  /** @type {RegExp[][]} */
  const lists = [];
  for (const match of js.matchAll(/(cls:\s*)?(?:"([^"\n]*)"|`([^`\n]*)`)/g)) {
    const text = `${match[1] ? "ae-btn " : ""}${match[2] ?? match[3] ?? ""}`;
    const tokens = text.replace(/\$\{[^}]*\}/g, "*").split(/\s+/).filter((t) => /^ae-[\w*-]+$/.test(t));
    if (tokens.length < 2) continue;
    lists.push(tokens.map((t) => new RegExp(`^${t.replace(/\*/g, "[\\w-]*")}$`)));
  }
  return lists;
}

/** Whether two properties set the same thing (`font` and `font-size`, `border` and `border-left-color`). */
const overlap = (/** @type {string} */ a, /** @type {string} */ b) => a === b || a.startsWith(`${b}-`) || b.startsWith(`${a}-`);

/**
 * Each widget rule that a later copy of base.css would override, as "widget .class prop / .base prop".
 * @param {Map<string, Set<string>>} base
 * @param {Map<string, Set<string>>} own
 * @param {RegExp[][]} lists
 * @returns {string[]}
 */
function overridden(base, own, lists) {
  const found = [];
  for (const list of lists) {
    const on = (/** @type {string} */ name) => list.some((pattern) => pattern.test(name));
    for (const [mine, props] of own) {
      if (!on(mine) || base.has(mine)) continue;
      for (const [shared, baseProps] of base) {
        if (!on(shared)) continue;
        for (const prop of props) {
          const clash = [...baseProps].find((b) => overlap(prop, b));
          if (clash) found.push(`.${mine} ${prop} / .${shared} ${clash}`);
        }
      }
    }
  }
  return [...new Set(found)];
}

const read = (/** @type {string} */ name) => readFileSync(join(SRC, name), "utf8");

describe("stylesheets", () => {
  it("finds a widget rule that a later copy of base.css overrides", () => {
    const base = oneClassRules(".ae-btn { font: inherit; padding: 3px; }");
    const own = oneClassRules(".ae-btn-small { padding: 1px; }\n.ae-tone-x { --ae-tone: red; }");
    expect(overridden(base, own, classLists('button("x", f, { cls: "ae-btn-small" })')))
      .toEqual([".ae-btn-small padding / .ae-btn padding"]);
    expect(overridden(base, own, classLists("h(\"b\", { class: `ae-btn ae-tone-${x}` })"))).toEqual([]);
  });

  it("hold no widget rule that a later copy of base.css would override", () => {
    const base = oneClassRules(read("base.css"));
    const widgets = readdirSync(SRC).filter((f) => f.endsWith(".css") && f !== "base.css");
    const code = readdirSync(SRC).filter((f) => f.endsWith(".js"))
      .concat(readdirSync(join(SRC, "lib")).map((f) => join("lib", f)));
    const lists = code.flatMap((f) => classLists(read(f)));
    expect(widgets.length).toBeGreaterThan(3);
    expect(lists.length).toBeGreaterThan(10);
    expect(widgets.flatMap((file) => overridden(base, oneClassRules(read(file)), lists)
      .map((clash) => `${file}: ${clash}`))).toEqual([]);
  });
});
