// A safe Markdown subset for model text: paragraphs, headings, emphasis, inline code, fenced code
// (highlighted), lists, quotes and links. It builds DOM nodes from text nodes only; raw HTML in
// the text stays text, and only http(s) and mailto links become anchors.

import { h } from "./dom.js";
import { codeBlock, languageFor } from "./highlight.js";

const MAX_DEPTH = 6;
const FENCE = /^\s{0,3}(`{3,}|~{3,})\s*([\w+#.-]*)/;
const HEADING = /^\s{0,3}(#{1,6})\s+(.*?)\s*#*\s*$/;
const RULE = /^\s{0,3}([-*_])(\s*\1){2,}\s*$/;
const QUOTE = /^\s{0,3}>\s?/;
const ITEM = /^(\s*)([-*+]|\d{1,9}[.)])\s+(.*)$/;

/**
 * Whether a link target is safe to follow: absolute http(s) or mailto, nothing else.
 * @param {string} url
 * @returns {string | null} the normalised URL, or null when it must stay text
 */
export function safeHref(url) {
  const trimmed = url.trim();
  if (!trimmed || /[\s\u0000-\u001f]/.test(trimmed)) return null;
  try {
    const parsed = new URL(trimmed);
    return ["http:", "https:", "mailto:"].includes(parsed.protocol) ? parsed.href : null;
  } catch {
    return null;
  }
}

/**
 * Render Markdown text into DOM nodes.
 * @param {string} text
 * @returns {DocumentFragment}
 */
export function renderMarkdown(text) {
  const frag = document.createDocumentFragment();
  for (const node of blocks(text.replace(/\r\n/g, "\n").split("\n"), 0)) frag.appendChild(node);
  return frag;
}

/**
 * @param {string[]} lines @param {number} depth
 * @returns {Node[]}
 */
function blocks(lines, depth) {
  /** @type {Node[]} */
  const out = [];
  /** @type {string[]} */
  let para = [];
  const flush = () => {
    if (para.length) out.push(h("p", { class: "ae-md-p" }, ...inline(para.join("\n"), depth)));
    para = [];
  };
  let i = 0;
  while (i < lines.length) {
    const line = lines[i] ?? "";
    const fence = FENCE.exec(line);
    if (fence) {
      flush();
      const marker = fence[1] ?? "```";
      /** @type {string[]} */
      const code = [];
      i++;
      while (i < lines.length && !(lines[i] ?? "").trim().startsWith(marker)) code.push(lines[i++] ?? "");
      i++;
      out.push(codeBlock(code.join("\n"), languageFor({ language: fence[2] ?? "" })));
      continue;
    }
    if (!line.trim()) { flush(); i++; continue; }
    const heading = HEADING.exec(line);
    if (heading) {
      flush();
      const level = Math.min(6, (heading[1] ?? "#").length + 2);
      out.push(h(`h${level}`, { class: "ae-md-h" }, ...inline(heading[2] ?? "", depth)));
      i++;
      continue;
    }
    if (RULE.test(line)) { flush(); out.push(h("hr", { class: "ae-md-hr" })); i++; continue; }
    if (QUOTE.test(line) && depth < MAX_DEPTH) {
      flush();
      /** @type {string[]} */
      const quoted = [];
      while (i < lines.length && QUOTE.test(lines[i] ?? "")) quoted.push((lines[i++] ?? "").replace(QUOTE, ""));
      out.push(h("blockquote", { class: "ae-md-quote" }, blocks(quoted, depth + 1)));
      continue;
    }
    const item = ITEM.exec(line);
    if (item && depth < MAX_DEPTH) {
      flush();
      const [list, next] = listAt(lines, i, depth);
      out.push(list);
      i = next;
      continue;
    }
    para.push(line);
    i++;
  }
  flush();
  return out;
}

/**
 * A list starting at line `start`; returns it and the index after it.
 * @param {string[]} lines @param {number} start @param {number} depth
 * @returns {[HTMLElement, number]}
 */
function listAt(lines, start, depth) {
  const first = /** @type {RegExpExecArray} */ (ITEM.exec(lines[start] ?? ""));
  const indent = (first[1] ?? "").length;
  const ordered = /\d/.test(first[2] ?? "");
  const list = h(ordered ? "ol" : "ul", {
    class: "ae-md-list",
    start: ordered && parseInt(first[2] ?? "1", 10) !== 1 ? parseInt(first[2] ?? "1", 10) : null,
  });
  let i = start;
  while (i < lines.length) {
    const m = ITEM.exec(lines[i] ?? "");
    if (!m || (m[1] ?? "").length !== indent || /\d/.test(m[2] ?? "") !== ordered) break;
    /** @type {string[]} */
    const body = [m[3] ?? ""];
    i++;
    while (i < lines.length) {
      const next = lines[i] ?? "";
      const nested = ITEM.exec(next);
      const continues = next.trim() && (/^\s+/.exec(next)?.[0].length ?? 0) > indent;
      if (nested && (nested[1] ?? "").length <= indent) break;
      if (!continues && !(next.trim() === "" && (/^\s+/.exec(lines[i + 1] ?? "")?.[0].length ?? 0) > indent)) break;
      body.push(next.slice(Math.min(indent + 2, (/^\s*/.exec(next)?.[0].length ?? 0))));
      i++;
    }
    const content = blocks(body, depth + 1);
    const li = h("li");
    for (const node of content) {
      const tight = node instanceof HTMLElement && node.tagName === "P" && content.length <= 2;
      if (tight) li.append(...Array.from(node.childNodes));
      else li.appendChild(node);
    }
    list.appendChild(li);
  }
  return [list, i];
}

const INLINE = new RegExp([
  "(`+)([\\s\\S]*?[^`])\\1(?!`)",          // 1,2 code span
  "\\[([^\\]]*)\\]\\(\\s*<?([^)\\s>]*)>?(?:\\s+\"[^\"]*\")?\\s*\\)", // 3,4 link
  "<((?:https?|mailto):[^\\s>]+)>",          // 5 autolink
  "\\*\\*(?=\\S)([\\s\\S]*?\\S)\\*\\*",      // 6 strong
  "__(?=\\S)([\\s\\S]*?\\S)__(?!\\w)",       // 7 strong
  "~~(?=\\S)([\\s\\S]*?\\S)~~",              // 8 strikethrough
  "\\*(?=[^\\s*])([\\s\\S]*?[^\\s*])\\*",    // 9 emphasis
  "(?<![\\w])_(?=[^\\s_])([\\s\\S]*?[^\\s_])_(?![\\w])", // 10 emphasis
  "\\\\([\\\\`*_{}\\[\\]()#+\\-.!~<>|])",    // 11 escape
  "\\b(https?://[^\\s<>()\"']*[^\\s<>()\"'.,;:!?])", // 12 bare URL
].join("|"));

/**
 * Inline Markdown as nodes.
 * @param {string} text @param {number} depth
 * @returns {Node[]}
 */
function inline(text, depth) {
  /** @type {Node[]} */
  const out = [];
  let rest = text;
  while (rest) {
    const m = depth < MAX_DEPTH ? INLINE.exec(rest) : null;
    if (!m) { out.push(document.createTextNode(rest)); break; }
    if (m.index > 0) out.push(document.createTextNode(rest.slice(0, m.index)));
    out.push(inlineNode(m, depth));
    rest = rest.slice(m.index + m[0].length);
  }
  return out;
}

/**
 * @param {RegExpExecArray} m @param {number} depth
 * @returns {Node}
 */
function inlineNode(m, depth) {
  if (m[2] !== undefined) return h("code", { class: "ae-md-code" }, m[2].replace(/^ (.*) $/, "$1"));
  if (m[3] !== undefined) return link(m[3], m[4] ?? "", depth);
  if (m[5] !== undefined) return link(m[5], m[5], depth);
  if (m[6] !== undefined || m[7] !== undefined) return h("strong", null, ...inline(m[6] ?? m[7] ?? "", depth + 1));
  if (m[8] !== undefined) return h("del", null, ...inline(m[8], depth + 1));
  if (m[9] !== undefined || m[10] !== undefined) return h("em", null, ...inline(m[9] ?? m[10] ?? "", depth + 1));
  if (m[11] !== undefined) return document.createTextNode(m[11]);
  return link(m[12] ?? "", m[12] ?? "", depth);
}

/**
 * An anchor when the target is safe; otherwise the text and the target as plain text.
 * @param {string} label @param {string} url @param {number} depth
 * @returns {Node}
 */
function link(label, url, depth) {
  const href = safeHref(url);
  const children = label === url ? [label] : inline(label, depth + 1);
  if (!href) {
    const span = h("span", { class: "ae-md-unsafe-link" }, ...children);
    if (label !== url && url) span.appendChild(document.createTextNode(` (${url})`));
    return span;
  }
  return h("a", { href, target: "_blank", rel: "noopener noreferrer nofollow" }, ...children);
}
