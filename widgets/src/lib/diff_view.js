// The diff table: unified or side by side, line numbers, highlighted code, a cap on length.

import { h } from "./dom.js";
import { renderTokens, tokenizeLines } from "./highlight.js";
import { pairRows } from "./diff.js";

/** Lines rendered before the rest is summarised, so a huge diff cannot freeze the page. */
export const MAX_DIFF_LINES = 3000;

const SIGN = { add: "+", del: "\u2212", ctx: " " };
const SIGN_LABEL = { add: "added", del: "removed", ctx: "unchanged" };

/**
 * "+3 −1" (zero parts left out; "no changes" when both are zero).
 * @param {DiffStats} stats
 * @returns {string}
 */
export function formatStats(stats) {
  const parts = [];
  if (stats.added) parts.push(`+${stats.added}`);
  if (stats.removed) parts.push(`\u2212${stats.removed}`);
  return parts.length ? parts.join(" ") : "no changes";
}

/**
 * @param {number | null} no
 * @returns {HTMLElement}
 */
function lineNo(no) {
  return h("td", { class: "ae-diff-no", "aria-hidden": "true" }, no === null ? "" : String(no));
}

/**
 * @param {Token[] | undefined} tokens @param {string} cls
 * @returns {HTMLElement}
 */
function codeCell(tokens, cls) {
  return h("td", { class: `ae-diff-code ${cls}` }, ...renderTokens(tokens ?? []));
}

/**
 * A table of hunks.
 * @param {Hunk[]} hunks
 * @param {"unified" | "split"} layout
 * @param {string | null} lang
 * @param {string} label accessible name of the table
 * @returns {HTMLElement}
 */
export function renderDiff(hunks, layout, lang, label) {
  const table = h("table", { class: `ae-diff ae-diff-${layout}`, "aria-label": label });
  const body = h("tbody");
  table.appendChild(body);
  const columns = 4;
  let shown = 0;
  let hidden = 0;
  for (const hunk of hunks) {
    if (shown >= MAX_DIFF_LINES) { hidden += hunk.lines.length; continue; }
    body.appendChild(h("tr", { class: "ae-diff-hunk" },
      h("td", { colspan: columns, class: "ae-diff-hunk-header" }, hunk.header)));
    const lines = hunk.lines.slice(0, MAX_DIFF_LINES - shown);
    hidden += hunk.lines.length - lines.length;
    shown += lines.length;
    if (layout === "unified") {
      const tokens = tokenizeLines(lines.map((l) => l.text), lang);
      lines.forEach((line, i) => {
        body.appendChild(h("tr", { class: `ae-diff-line ae-diff-${line.type}` },
          lineNo(line.oldNo), lineNo(line.newNo),
          h("td", { class: "ae-diff-sign", "aria-label": SIGN_LABEL[line.type] }, SIGN[line.type]),
          codeCell(tokens[i], "")));
      });
    } else {
      const rows = pairRows(lines);
      const left = tokenizeLines(rows.map((r) => r.left?.text ?? ""), lang);
      const right = tokenizeLines(rows.map((r) => r.right?.text ?? ""), lang);
      rows.forEach((row, i) => {
        const lt = row.left ? row.left.type : "empty";
        const rt = row.right ? row.right.type : "empty";
        body.appendChild(h("tr", { class: "ae-diff-line" },
          lineNo(row.left?.oldNo ?? null),
          codeCell(row.left ? left[i] : [], `ae-diff-${lt}`),
          lineNo(row.right?.newNo ?? null),
          codeCell(row.right ? right[i] : [], `ae-diff-${rt}`)));
      });
    }
  }
  if (hidden > 0) {
    body.appendChild(h("tr", { class: "ae-diff-more" },
      h("td", { colspan: columns }, `${hidden} more lines are not shown here.`)));
  }
  return table;
}
