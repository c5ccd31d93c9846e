import { describe, expect, it, vi } from "vitest";
import { changeStats, diffLines, diffStats, pairRows, parseUnified, splitLines, toHunks } from "../src/lib/diff.js";
import { languageFor, tokenizeLines } from "../src/lib/highlight.js";
import { renderMarkdown, safeHref } from "../src/lib/markdown.js";
import { heartbeat, listen } from "../src/lib/model.js";
import { fakeModel } from "./fake_model.js";

/** @param {string} code @param {string} lang */
const kinds = (code, lang) => tokenizeLines(code.split("\n"), lang)
  .map((line) => line.filter((t) => t.type !== "plain").map((t) => `${t.type}:${t.text}`));

describe("highlight", () => {
  it("picks the language from a name, a path or a cell type", () => {
    expect(languageFor({ path: "a/b.tsx" })).toBe("javascript");
    expect(languageFor({ language: "bash" })).toBe("shell");
    expect(languageFor({ cellType: "markdown", path: "n.ipynb" })).toBe("markdown");
    expect(languageFor({ path: "Makefile" })).toBeNull();
  });

  it("colours Python, carrying a docstring across lines", () => {
    expect(kinds('@cache\ndef f(x=0x1F):\n    """Doc\n    more"""  # note\n    return None', "python")).toEqual([
      ["meta:@cache"], ["keyword:def", "number:0x1F"], ['string:"""Doc'], ['string:    more"""', "comment:# note"],
      ["keyword:return", "atom:None"],
    ]);
  });

  it("colours JavaScript comments, template strings and numbers", () => {
    expect(kinds("const a = `x ${b}\ny`; /* c */ let n = 1.5e3; // end", "javascript")).toEqual([
      ["keyword:const", "string:`x ${b}"], ["string:y`", "comment:/* c */", "keyword:let", "number:1.5e3", "comment:// end"],
    ]);
  });

  it("tells JSON keys from values", () => {
    expect(kinds('{"a": "b", "n": -1, "t": true}', "json")).toEqual([
      ['property:"a"', 'string:"b"', 'property:"n"', "number:1", 'property:"t"', "atom:true"],
    ]);
  });

  it("colours shell commands, flags, variables and comments", () => {
    expect(kinds("cd $HOME && git commit -m 'msg' | tee log # done", "shell")).toEqual([
      ["command:cd", "variable:$HOME", "command:git", "property:-m", "string:'msg'", "command:tee", "comment:# done"],
    ]);
    expect(kinds("echo a#b", "shell")).toEqual([["command:echo"]]);
  });

  it("colours Markdown headings, lists, code and links", () => {
    expect(kinds("# Title\n- item with `code` and [a link](https://x.y)\n```\nraw\n```", "markdown")).toEqual([
      ["heading:# Title"], ["keyword:- ", "string:`code`", "link:[a link](https://x.y)"], ["meta:```"], ["string:raw"], ["meta:```"],
    ]);
  });
});

describe("diff", () => {
  it("aligns lines and numbers both sides", () => {
    const lines = diffLines(["a", "b", "c"], ["a", "B", "c", "d"]);
    expect(lines.map((l) => `${l.type}:${l.text}:${l.oldNo}:${l.newNo}`)).toEqual([
      "ctx:a:1:1", "del:b:2:null", "add:B:null:2", "ctx:c:3:3", "add:d:null:4",
    ]);
    expect(diffStats(lines)).toEqual({ added: 2, removed: 1 });
  });

  it("keeps three lines of context around changes in hunks", () => {
    const before = Array.from({ length: 20 }, (_, i) => `line ${i + 1}`);
    const after = before.map((l, i) => (i === 1 || i === 17 ? `${l}!` : l));
    const hunks = toHunks(diffLines(before, after));
    expect(hunks.map((h) => h.header)).toEqual(["@@ -1,5 +1,5 @@", "@@ -15,6 +15,6 @@"]);
  });

  it("parses unified diffs, ignoring file headers and no-newline markers", () => {
    const hunks = parseUnified("diff --git a/x b/x\n--- a/x\n+++ b/x\n@@ -1,2 +1,2 @@\n-a\n+b\n c\n\\ No newline at end of file\n");
    expect(hunks.length).toBe(1);
    expect(hunks[0]?.lines.map((l) => l.type)).toEqual(["del", "add", "ctx"]);
  });

  it("pairs removals with their replacements side by side", () => {
    const rows = pairRows(diffLines(["a", "b", "c"], ["x", "y"]));
    expect(rows.map((r) => [r.left?.text ?? null, r.right?.text ?? null])).toEqual([["a", "x"], ["b", "y"], ["c", null]]);
  });

  it("counts a new file and a trailing newline sensibly", () => {
    expect(splitLines("a\nb\n")).toEqual(["a", "b"]);
    expect(changeStats("", "a\nb\n")).toEqual({ added: 2, removed: 0 });
    expect(changeStats(null, null)).toEqual({ added: 0, removed: 0 });
  });
});

describe("markdown", () => {
  /** @param {string} text */
  const html = (text) => {
    const div = document.createElement("div");
    div.appendChild(renderMarkdown(text));
    return div;
  };

  it("allows only http(s) and mailto links", () => {
    expect(safeHref("https://example.com/x")).toBe("https://example.com/x");
    expect(safeHref("mailto:a@b.c")).toBe("mailto:a@b.c");
    for (const bad of ["javascript:alert(1)", " JAVASCRIPT:alert(1)", "data:text/html,<b>", "vbscript:x", "/relative", "java\nscript:x"]) {
      expect(safeHref(bad)).toBeNull();
    }
  });

  it("renders nested lists, quotes, rules and ordered lists", () => {
    const div = html("1. one\n2. two\n   - sub\n\n> quoted *text*\n\n---\n\n3) three");
    expect(div.querySelector("ol > li")?.textContent).toBe("one");
    expect(div.querySelector("ol li ul li")?.textContent).toBe("sub");
    expect(div.querySelector("blockquote em")?.textContent).toBe("text");
    expect(div.querySelector("hr")).not.toBeNull();
  });

  it("keeps an unclosed fence as code while text streams in", () => {
    const div = html("Here:\n```js\nconst a = 1;");
    expect(div.querySelector("pre code")?.textContent).toBe("const a = 1;");
  });

  it("links bare URLs and leaves snake_case words alone", () => {
    const div = html("See https://example.com/docs. The my_var_name stays.");
    expect(div.querySelector("a")?.getAttribute("href")).toBe("https://example.com/docs");
    expect(div.querySelector("em")).toBeNull();
    expect(div.textContent).toBe("See https://example.com/docs. The my_var_name stays.");
  });

  it("escapes markup inside code spans and emphasis", () => {
    const div = html("`<b>x</b>` and *<i>y</i>* and \\*not emphasis\\*");
    expect(div.querySelector("b")).toBeNull();
    expect(div.querySelector("i")).toBeNull();
    expect(div.querySelector("code")?.textContent).toBe("<b>x</b>");
    expect(div.textContent).toContain("*not emphasis*");
  });
});

describe("model", () => {
  it("listens to each named trait until told to stop", () => {
    const model = fakeModel({ status: "pending", usage: {} });
    /** @type {string[]} */
    const heard = [];
    const unlisten = listen(model, { status: () => heard.push("status"), usage: () => heard.push("usage") });
    model.set("status", "decided");
    model.set("usage", { input_tokens: 3 });
    model.set("other", 1);
    unlisten();
    model.set("status", "cancelled");
    expect(heard).toEqual(["status", "usage"]);
  });

  it("beats every `beat` seconds until stopped, and not at all without a beat", () => {
    vi.useFakeTimers();
    try {
      const model = fakeModel({ beat: 2 });
      const stop = heartbeat(model);
      vi.advanceTimersByTime(4100);
      stop();
      stop();
      vi.advanceTimersByTime(10000);
      expect(model.sent).toEqual([{ type: "alive" }, { type: "alive" }]);
      const silent = fakeModel({});
      heartbeat(silent);
      vi.advanceTimersByTime(10000);
      expect(silent.sent).toEqual([]);
    } finally {
      vi.useRealTimers();
    }
  });
});
