// Line diffs: computed from two texts, or parsed from a unified diff; hunks, stats and the
// row pairing of the side-by-side view.

/** Above this many cells the line diff gives up on alignment and replaces the changed block. */
const LCS_LIMIT = 4_000_000;

/**
 * Lines of a text; a final newline does not make an extra empty line.
 * @param {string | null | undefined} text
 * @returns {string[]}
 */
export function splitLines(text) {
  if (!text) return [];
  return text.replace(/\r\n/g, "\n").replace(/\n$/, "").split("\n");
}

/**
 * Every line of `a` and `b` in order, marked kept, added or removed.
 * @param {string[]} a @param {string[]} b
 * @returns {DiffLine[]}
 */
export function diffLines(a, b) {
  let start = 0;
  while (start < a.length && start < b.length && a[start] === b[start]) start++;
  let endA = a.length;
  let endB = b.length;
  while (endA > start && endB > start && a[endA - 1] === b[endB - 1]) { endA--; endB--; }
  /** @type {DiffLine[]} */
  const out = [];
  for (let i = 0; i < start; i++) out.push({ type: "ctx", text: a[i] ?? "", oldNo: i + 1, newNo: i + 1 });
  const midA = a.slice(start, endA);
  const midB = b.slice(start, endB);
  for (const op of middle(midA, midB)) {
    out.push({
      type: op.type, text: op.text,
      oldNo: op.a === null ? null : start + op.a + 1,
      newNo: op.b === null ? null : start + op.b + 1,
    });
  }
  for (let i = endA, j = endB; i < a.length; i++, j++) {
    out.push({ type: "ctx", text: a[i] ?? "", oldNo: i + 1, newNo: j + 1 });
  }
  return out;
}

/**
 * The changed middle, aligned by longest common subsequence when small enough.
 * @param {string[]} a @param {string[]} b
 * @returns {{type: "ctx" | "add" | "del", text: string, a: number | null, b: number | null}[]}
 */
function middle(a, b) {
  const n = a.length;
  const m = b.length;
  /** @type {{type: "ctx" | "add" | "del", text: string, a: number | null, b: number | null}[]} */
  const ops = [];
  if (n * m > LCS_LIMIT || n === 0 || m === 0) {
    a.forEach((text, i) => ops.push({ type: "del", text, a: i, b: null }));
    b.forEach((text, j) => ops.push({ type: "add", text, a: null, b: j }));
    return ops;
  }
  const w = m + 1;
  const table = new Uint32Array((n + 1) * w);
  for (let i = n - 1; i >= 0; i--) {
    for (let j = m - 1; j >= 0; j--) {
      table[i * w + j] = a[i] === b[j]
        ? (table[(i + 1) * w + j + 1] ?? 0) + 1
        : Math.max(table[(i + 1) * w + j] ?? 0, table[i * w + j + 1] ?? 0);
    }
  }
  let i = 0;
  let j = 0;
  while (i < n || j < m) {
    if (i < n && j < m && a[i] === b[j]) {
      ops.push({ type: "ctx", text: a[i] ?? "", a: i, b: j });
      i++; j++;
    } else if (i < n && (j >= m || (table[(i + 1) * w + j] ?? 0) >= (table[i * w + j + 1] ?? 0))) {
      ops.push({ type: "del", text: a[i] ?? "", a: i, b: null });
      i++;
    } else {
      ops.push({ type: "add", text: b[j] ?? "", a: null, b: j });
      j++;
    }
  }
  return ops;
}

/**
 * Group a full line diff into hunks with `context` unchanged lines around each change.
 * @param {DiffLine[]} lines @param {number} [context]
 * @returns {Hunk[]}
 */
export function toHunks(lines, context = 3) {
  const keep = lines.map(() => false);
  let last = -Infinity;
  lines.forEach((line, i) => {
    if (line.type !== "ctx") last = i;
    if (i - last <= context) keep[i] = true;
  });
  let next = Infinity;
  for (let i = lines.length - 1; i >= 0; i--) {
    if (lines[i]?.type !== "ctx") next = i;
    if (next - i <= context) keep[i] = true;
  }
  /** @type {Hunk[]} */
  const hunks = [];
  /** @type {DiffLine[] | null} */
  let current = null;
  lines.forEach((line, i) => {
    if (!keep[i]) { current = null; return; }
    if (!current) { current = []; hunks.push({ header: "", lines: current }); }
    current.push(line);
  });
  for (const hunk of hunks) hunk.header = hunkHeader(hunk.lines);
  return hunks;
}

/** @param {DiffLine[]} lines @returns {string} */
function hunkHeader(lines) {
  const olds = lines.filter((l) => l.type !== "add");
  const news = lines.filter((l) => l.type !== "del");
  const oldStart = olds[0]?.oldNo ?? Math.max(0, (lines[0]?.oldNo ?? 1) - 1);
  const newStart = news[0]?.newNo ?? Math.max(0, (lines[0]?.newNo ?? 1) - 1);
  return `@@ -${oldStart},${olds.length} +${newStart},${news.length} @@`;
}

/**
 * Hunks of a unified diff (file headers and "no newline" markers skipped).
 * @param {string} text
 * @returns {Hunk[]}
 */
export function parseUnified(text) {
  /** @type {Hunk[]} */
  const hunks = [];
  /** @type {Hunk | null} */
  let hunk = null;
  let oldNo = 0;
  let newNo = 0;
  let oldLeft = 0;
  let newLeft = 0;
  for (const raw of text.replace(/\r\n/g, "\n").split("\n")) {
    const head = /^@@ -(\d+)(?:,(\d+))? \+(\d+)(?:,(\d+))? @@/.exec(raw);
    if (head) {
      oldNo = Number(head[1]);
      oldLeft = head[2] === undefined ? 1 : Number(head[2]);
      newNo = Number(head[3]);
      newLeft = head[4] === undefined ? 1 : Number(head[4]);
      hunk = { header: raw, lines: [] };
      hunks.push(hunk);
      continue;
    }
    if (!hunk || (oldLeft <= 0 && newLeft <= 0) || raw.startsWith("\\")) continue;
    const sign = raw[0];
    const body = raw.slice(1);
    if (sign === "+") {
      hunk.lines.push({ type: "add", text: body, oldNo: null, newNo: newNo++ });
      newLeft--;
    } else if (sign === "-") {
      hunk.lines.push({ type: "del", text: body, oldNo: oldNo++, newNo: null });
      oldLeft--;
    } else if (sign === " " || raw === "") {
      hunk.lines.push({ type: "ctx", text: body, oldNo: oldNo++, newNo: newNo++ });
      oldLeft--;
      newLeft--;
    }
  }
  return hunks;
}

/**
 * Added and removed line counts.
 * @param {Hunk[] | DiffLine[]} input
 * @returns {DiffStats}
 */
export function diffStats(input) {
  /** @type {DiffLine[]} */
  const lines = input.flatMap((x) => ("lines" in x ? x.lines : [x]));
  return {
    added: lines.filter((l) => l.type === "add").length,
    removed: lines.filter((l) => l.type === "del").length,
  };
}

/**
 * Lines added and removed going from one text to another.
 * @param {string | null | undefined} before @param {string | null | undefined} after
 * @returns {DiffStats}
 */
export function changeStats(before, after) {
  return diffStats(diffLines(splitLines(before), splitLines(after)));
}

/**
 * Rows of the side-by-side view: removals paired with the additions that replace them.
 * @param {DiffLine[]} lines
 * @returns {{left: DiffLine | null, right: DiffLine | null}[]}
 */
export function pairRows(lines) {
  /** @type {{left: DiffLine | null, right: DiffLine | null}[]} */
  const rows = [];
  let i = 0;
  while (i < lines.length) {
    const line = /** @type {DiffLine} */ (lines[i]);
    if (line.type === "ctx") { rows.push({ left: line, right: line }); i++; continue; }
    /** @type {DiffLine[]} */
    const dels = [];
    /** @type {DiffLine[]} */
    const adds = [];
    while (i < lines.length && lines[i]?.type === "del") dels.push(/** @type {DiffLine} */ (lines[i++]));
    while (i < lines.length && lines[i]?.type === "add") adds.push(/** @type {DiffLine} */ (lines[i++]));
    for (let k = 0; k < Math.max(dels.length, adds.length); k++) {
      rows.push({ left: dels[k] ?? null, right: adds[k] ?? null });
    }
  }
  return rows;
}
