// A small line-based highlighter (Python, JS/TS, JSON, shell, Markdown): keywords, strings,
// comments, numbers. State is carried across lines so multi-line strings and comments colour
// correctly in diffs, which are rendered line by line.

/**
 * @typedef {object} LangSpec
 * @property {Set<string>} keywords
 * @property {Set<string>} atoms
 * @property {Set<string>} builtins
 * @property {string | null} lineComment
 * @property {boolean} [commentAfterSpace] a line comment only starts a word (shell `#`)
 * @property {[string, string] | null} blockComment
 * @property {{start: string, end: string, escapes: boolean, multiline: boolean}[]} strings
 * @property {boolean} [keys] strings followed by ":" are property names (JSON)
 * @property {boolean} [shell] command positions, $variables and -flags
 * @property {boolean} [decorators] `@name` is meta (Python)
 */

/** @param {string} words */
const set = (words) => new Set(words.split(/\s+/).filter(Boolean));

/** @type {Record<string, LangSpec>} */
const LANGS = {
  python: {
    keywords: set(`and as assert async await break class continue def del elif else except
      finally for from global if import in is lambda nonlocal not or pass raise return try
      while with yield match case`),
    atoms: set("True False None self cls"),
    builtins: set(`print len range dict list set tuple str int float bool open isinstance super
      type enumerate zip map filter sorted min max sum any all repr getattr setattr hasattr
      Exception ValueError TypeError KeyError RuntimeError`),
    lineComment: "#",
    blockComment: null,
    strings: [
      { start: '"""', end: '"""', escapes: true, multiline: true },
      { start: "'''", end: "'''", escapes: true, multiline: true },
      { start: '"', end: '"', escapes: true, multiline: false },
      { start: "'", end: "'", escapes: true, multiline: false },
    ],
    decorators: true,
  },
  javascript: {
    keywords: set(`break case catch class const continue debugger default delete do else
      export extends finally for function if import in instanceof let new return super switch
      this throw try typeof var void while with yield async await of static get set from as
      interface type enum implements private public protected readonly declare namespace
      abstract keyof`),
    atoms: set("true false null undefined NaN Infinity"),
    builtins: set("console Object Array String Number Boolean Promise Map Set JSON Math Error"),
    lineComment: "//",
    blockComment: ["/*", "*/"],
    strings: [
      { start: "`", end: "`", escapes: true, multiline: true },
      { start: '"', end: '"', escapes: true, multiline: false },
      { start: "'", end: "'", escapes: true, multiline: false },
    ],
  },
  json: {
    keywords: new Set(),
    atoms: set("true false null"),
    builtins: new Set(),
    lineComment: null,
    blockComment: null,
    strings: [{ start: '"', end: '"', escapes: true, multiline: false }],
    keys: true,
  },
  shell: {
    keywords: set(`if then else elif fi for while until do done case esac function in select
      time return export local readonly declare unset source alias exit`),
    atoms: set("true false"),
    builtins: new Set(),
    lineComment: "#",
    commentAfterSpace: true,
    blockComment: null,
    strings: [
      { start: '"', end: '"', escapes: true, multiline: true },
      { start: "'", end: "'", escapes: false, multiline: true },
    ],
    shell: true,
  },
};

const ALIASES = /** @type {Record<string, string>} */ ({
  py: "python", python: "python", ipython: "python", python3: "python",
  js: "javascript", javascript: "javascript", mjs: "javascript", cjs: "javascript",
  jsx: "javascript", ts: "javascript", tsx: "javascript", typescript: "javascript",
  json: "json", ipynb: "json", jsonc: "json",
  sh: "shell", bash: "shell", zsh: "shell", shell: "shell", console: "shell",
  md: "markdown", markdown: "markdown",
});

/**
 * The language to highlight, from an explicit name, a file path or a notebook cell type.
 * @param {{language?: string | null, path?: string | null, cellType?: string | null}} hint
 * @returns {string | null}
 */
export function languageFor(hint) {
  const named = (hint.language ?? "").toLowerCase();
  if (named && ALIASES[named]) return ALIASES[named];
  if (hint.cellType === "markdown") return "markdown";
  if (hint.cellType === "code") return "python";
  const match = /\.([A-Za-z0-9]+)$/.exec(hint.path ?? "");
  if (match) return ALIASES[(match[1] ?? "").toLowerCase()] ?? null;
  return null;
}

/**
 * Index just past `end`, searching from `from`; -1 when the line ends first.
 * @param {string} line @param {number} from @param {string} end @param {boolean} escapes
 * @returns {number}
 */
function findEnd(line, from, end, escapes) {
  for (let i = from; i < line.length; i++) {
    if (escapes && line[i] === "\\") { i++; continue; }
    if (line.startsWith(end, i)) return i + end.length;
  }
  return -1;
}

const NUMBER = /^(?:0[xX][0-9a-fA-F_]+|0[bB][01_]+|0[oO][0-7_]+|(?:\d[\d_]*(?:\.\d*)?|\.\d+)(?:[eE][+-]?\d+)?)[jJnlL]?/;
const IDENT = /^[A-Za-z_$][\w$]*/;
const SHELL_WORD = /^[^\s|&;()<>"'`$#]+/;
const SHELL_VAR = /^\$(?:\{[^}]*\}?|[A-Za-z_]\w*|[0-9@#?*!$-])/;

/**
 * Tokens of one line of a programming language, and the state for the next line.
 * @param {string} line @param {LangSpec} spec @param {HighlightState} state
 * @returns {{tokens: Token[], state: HighlightState}}
 */
function scanCode(line, spec, state) {
  /** @type {Token[]} */
  const out = [];
  /** @param {TokenType} type @param {string} text */
  const push = (type, text) => {
    if (!text) return;
    const last = out[out.length - 1];
    if (last && last.type === type) last.text += text;
    else out.push({ type, text });
  };
  let i = 0;
  let open = state.open;
  if (open) {
    const end = findEnd(line, 0, open.end, open.escapes);
    if (end < 0) {
      push(open.type, line);
      return { tokens: out, state: { open } };
    }
    push(open.type, line.slice(0, end));
    i = end;
    open = null;
  }
  let command = true;
  while (i < line.length) {
    const ch = line[i] ?? "";
    const prev = i > 0 ? line[i - 1] ?? "" : "";
    if (spec.blockComment && line.startsWith(spec.blockComment[0], i)) {
      const end = findEnd(line, i + spec.blockComment[0].length, spec.blockComment[1], false);
      if (end < 0) {
        push("comment", line.slice(i));
        open = { end: spec.blockComment[1], type: "comment", escapes: false };
        break;
      }
      push("comment", line.slice(i, end));
      i = end;
      continue;
    }
    if (spec.lineComment && line.startsWith(spec.lineComment, i)
        && (!spec.commentAfterSpace || i === 0 || /\s/.test(prev))) {
      push("comment", line.slice(i));
      break;
    }
    const str = spec.strings.find((s) => line.startsWith(s.start, i));
    if (str) {
      const end = findEnd(line, i + str.start.length, str.end, str.escapes);
      if (end < 0) {
        push("string", line.slice(i));
        if (str.multiline) open = { end: str.end, type: "string", escapes: str.escapes };
        break;
      }
      const isKey = spec.keys && /^\s*:/.test(line.slice(end));
      push(isKey ? "property" : "string", line.slice(i, end));
      i = end;
      command = false;
      continue;
    }
    const rest = line.slice(i);
    if (spec.shell) {
      const variable = SHELL_VAR.exec(rest);
      if (variable) {
        push("variable", variable[0]);
        i += variable[0].length;
        command = false;
        continue;
      }
      const word = SHELL_WORD.exec(rest);
      if (word) {
        const text = word[0];
        let type = /** @type {TokenType} */ ("plain");
        if (spec.keywords.has(text)) type = "keyword";
        else if (command && !text.includes("=")) type = "command";
        else if (text.startsWith("-")) type = "property";
        else if (/^\d+$/.test(text)) type = "number";
        push(type, text);
        command = type === "keyword" && !["in", "function"].includes(text);
        i += text.length;
        continue;
      }
      if ("|&;(".includes(ch)) command = true;
      push("plain", ch);
      i += 1;
      continue;
    }
    if (!/[\w$]/.test(prev)) {
      const num = NUMBER.exec(rest);
      if (num && num[0] !== ".") {
        push("number", num[0]);
        i += num[0].length;
        continue;
      }
    }
    if (spec.decorators && ch === "@" && /^\s*$/.test(line.slice(0, i))) {
      const deco = /^@[\w.]+/.exec(rest);
      if (deco) {
        push("meta", deco[0]);
        i += deco[0].length;
        continue;
      }
    }
    const ident = IDENT.exec(rest);
    if (ident) {
      const word = ident[0];
      /** @type {TokenType} */
      let type = "plain";
      if (spec.keywords.has(word)) type = "keyword";
      else if (spec.atoms.has(word)) type = "atom";
      else if (spec.builtins.has(word)) type = "builtin";
      push(type, word);
      i += word.length;
      continue;
    }
    push("plain", ch);
    i += 1;
  }
  return { tokens: out, state: { open } };
}

const INLINE_MD = /(`[^`]+`)|(\*\*[^*]+\*\*|__[^_]+__)|(\*[^*\s][^*]*\*|_[^_\s][^_]*_)|(\[[^\]]*\]\([^)]*\))/;

/**
 * Tokens of one Markdown line (headings, list markers, quotes, fences, inline marks).
 * @param {string} line @param {HighlightState} state
 * @returns {{tokens: Token[], state: HighlightState}}
 */
function scanMarkdown(line, state) {
  if (/^\s*(```|~~~)/.test(line)) return { tokens: [{ type: "meta", text: line }], state: { open: null, fence: !state.fence } };
  if (state.fence) return { tokens: [{ type: "string", text: line }], state };
  if (/^\s{0,3}#{1,6}(\s|$)/.test(line)) return { tokens: [{ type: "heading", text: line }], state };
  /** @type {Token[]} */
  const out = [];
  let rest = line;
  const marker = /^(\s*(?:[-*+]|\d+[.)])\s+|\s*>\s?)/.exec(rest);
  if (marker) {
    out.push({ type: marker[0].trim().startsWith(">") ? "comment" : "keyword", text: marker[0] });
    rest = rest.slice(marker[0].length);
  }
  while (rest) {
    const m = INLINE_MD.exec(rest);
    if (!m) break;
    if (m.index > 0) out.push({ type: "plain", text: rest.slice(0, m.index) });
    const type = m[1] ? "string" : m[4] ? "link" : "emphasis";
    out.push({ type, text: m[0] });
    rest = rest.slice(m.index + m[0].length);
  }
  if (rest) out.push({ type: "plain", text: rest });
  return { tokens: out, state };
}

/**
 * Tokens for each line of `lines`, state carried from line to line.
 * @param {string[]} lines @param {string | null} lang
 * @returns {Token[][]}
 */
export function tokenizeLines(lines, lang) {
  const spec = lang ? LANGS[lang] : undefined;
  /** @type {HighlightState} */
  let state = { open: null };
  return lines.map((line) => {
    if (lang === "markdown") {
      const r = scanMarkdown(line, state);
      state = r.state;
      return r.tokens;
    }
    if (!spec) return line ? [{ type: /** @type {TokenType} */ ("plain"), text: line }] : [];
    const r = scanCode(line, spec, state);
    state = r.state;
    return r.tokens;
  });
}

/**
 * Spans for tokens (plain text as text nodes).
 * @param {Token[]} tokens
 * @returns {Node[]}
 */
export function renderTokens(tokens) {
  return tokens.map((t) => {
    if (t.type === "plain") return document.createTextNode(t.text);
    const span = document.createElement("span");
    span.className = `ae-tok-${t.type}`;
    span.textContent = t.text;
    return span;
  });
}

/**
 * A highlighted block of code as a <pre><code>.
 * @param {string} code @param {string | null} lang @param {string} [label] accessible name
 * @returns {HTMLElement}
 */
export function codeBlock(code, lang, label) {
  const pre = document.createElement("pre");
  pre.className = "ae-code";
  if (label) pre.setAttribute("aria-label", label);
  const el = document.createElement("code");
  if (lang) el.dataset["lang"] = lang;
  const lines = code.replace(/\n$/, "").split("\n");
  tokenizeLines(lines, lang).forEach((tokens, index) => {
    if (index > 0) el.appendChild(document.createTextNode("\n"));
    for (const node of renderTokens(tokens)) el.appendChild(node);
  });
  pre.appendChild(el);
  return pre;
}
