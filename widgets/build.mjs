// Bundle each widget into ONE file, as anywidget loads one ES module (and one stylesheet) per
// widget: src/<name>.js plus the helper modules it imports, concatenated in dependency order
// with the import lines and helper `export` keywords removed, and helper declarations the widget
// never reaches left out; src/base.css plus src/<name>.css. Dependency-free on purpose.
// `node build.mjs --check` fails when bundle/ is out of date.

import { existsSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { dirname, join, relative, resolve } from "node:path";
import { fileURLToPath } from "node:url";

const ROOT = dirname(fileURLToPath(import.meta.url));
const SRC = join(ROOT, "src");
const OUT = join(ROOT, "bundle");
export const WIDGETS = ["confirm_diff", "transcript", "tool_catalogue", "ask_user", "project_trust"];

const IMPORT = /^import\s*\{([^}]*)\}\s*from\s*"(\.{1,2}\/[^"]+)";?[ \t]*$/gm;
const ANY_IMPORT = /^\s*import\b/m;
const TOP_LEVEL = /^(?:export\s+)?(?:async\s+)?(?:function\*?|const|let|var|class)\s+([A-Za-z_$][\w$]*)/gm;
const EXPORTED = /^export\s+(?:async\s+)?(?:function\*?|const|let|class)\s+([A-Za-z_$][\w$]*)/gm;

/**
 * The modules a widget needs, dependencies first.
 * @param {string} entry absolute path
 * @returns {{path: string, code: string}[]}
 */
function collect(entry) {
  /** @type {{path: string, code: string}[]} */
  const ordered = [];
  /** @type {Set<string>} */
  const seen = new Set();
  /** @type {Set<string>} */
  const visiting = new Set();
  /** @param {string} path */
  const visit = (path) => {
    if (seen.has(path)) return;
    if (visiting.has(path)) throw new Error(`import cycle through ${relative(ROOT, path)}`);
    visiting.add(path);
    const source = readFileSync(path, "utf8");
    for (const match of source.matchAll(IMPORT)) {
      const target = resolve(dirname(path), match[2] ?? "");
      const exported = new Set([...readFileSync(target, "utf8").matchAll(EXPORTED)].map((m) => m[1]));
      for (const name of (match[1] ?? "").split(",").map((n) => n.trim()).filter(Boolean)) {
        if (!exported.has(name)) {
          throw new Error(`${relative(ROOT, path)} imports ${name}, which ${relative(ROOT, target)} does not export`);
        }
      }
      visit(target);
    }
    const code = source.replace(IMPORT, "");
    if (ANY_IMPORT.test(code)) {
      throw new Error(`${relative(ROOT, path)}: only "import { a } from \"./x.js\";" lines are supported`);
    }
    visiting.delete(path);
    seen.add(path);
    ordered.push({ path, code });
  };
  visit(entry);
  return ordered;
}

/**
 * Top-level declarations of a helper module, each with the comments just above it.
 * @param {string} code
 * @param {string} file for error messages
 * @returns {{name: string, text: string}[]}
 */
function declarations(code, file) {
  /** @type {{name: string, text: string}[]} */
  const chunks = [];
  /** @type {string[]} */
  let pending = [];
  for (const line of code.split("\n")) {
    const declared = /^(?:export\s+)?(?:async\s+)?(?:function\*?|const|let|var|class)\s+([A-Za-z_$][\w$]*)/.exec(line);
    if (declared) {
      chunks.push({ name: declared[1] ?? "", text: [...pending, line].join("\n") });
      pending = [];
    } else if (/^(\/\/|\/\*\*?|\s*\*)/.test(line) || !line.trim()) {
      pending.push(line);
    } else if (/^[\s})\]]/.test(line) && chunks.length) {
      const last = /** @type {{name: string, text: string}} */ (chunks[chunks.length - 1]);
      last.text += `\n${[...pending, line].join("\n")}`;
      pending = [];
    } else {
      throw new Error(`${file}: helper modules may only hold declarations at top level: ${line}`);
    }
  }
  return chunks;
}

/**
 * The helper declarations reachable from the entry's code, in source order.
 * @param {{path: string, code: string}[]} helpers
 * @param {string} entryCode
 * @returns {Map<string, string>} module path -> kept code
 */
function shake(helpers, entryCode) {
  // Identifiers outside string literals and comments (a miss shows up as tsc's "cannot find name").
  const words = (/** @type {string} */ text) => new Set(text
    .replace(/"(?:[^"\\\n]|\\.)*"|'(?:[^'\\\n]|\\.)*'/g, '""')
    .replace(/\/\*[\s\S]*?\*\//g, "")
    .replace(/\/\/.*$/gm, "")
    .match(/[A-Za-z_$][\w$]*/g) ?? []);
  const all = helpers.flatMap(({ path, code }) => declarations(code, relative(ROOT, path)).map((d) => ({ ...d, path })));
  const byName = new Map(all.map((d) => [d.name, d]));
  const kept = new Set();
  const queue = [...words(entryCode)];
  while (queue.length) {
    const decl = byName.get(queue.pop() ?? "");
    if (!decl || kept.has(decl)) continue;
    kept.add(decl);
    queue.push(...words(decl.text));
  }
  return new Map(helpers.map(({ path }) => [path,
    all.filter((d) => d.path === path && kept.has(d)).map((d) => d.text.trim()).join("\n\n")]));
}

/**
 * The bundled module and stylesheet of one widget.
 * @param {string} name
 * @returns {{js: string, css: string}}
 */
export function bundle(name) {
  const entry = join(SRC, `${name}.js`);
  const modules = collect(entry);
  /** @type {Map<string, string>} */
  const owners = new Map();
  for (const { path, code } of modules) {
    const file = relative(ROOT, path);
    for (const match of code.matchAll(TOP_LEVEL)) {
      const id = match[1] ?? "";
      const owner = owners.get(id);
      if (owner) throw new Error(`${file} and ${owner} both declare ${id} at top level`);
      owners.set(id, file);
    }
  }
  const entryCode = modules.find((m) => m.path === entry)?.code ?? "";
  const kept = shake(modules.filter((m) => m.path !== entry), entryCode);
  const parts = modules.map(({ path, code }) => {
    const file = relative(ROOT, path);
    const body = path === entry ? code
      : (kept.get(path) ?? "").replace(/^export\s+(?=(?:async\s+)?(?:function|const|let|class)\b)/gm, "");
    return body.trim() ? `// ---- ${file} ----\n${body.replace(/\n{3,}/g, "\n\n").trim()}\n` : "";
  }).filter(Boolean);
  const banner = `// Generated by widgets/build.mjs from widgets/src; edit those files, then run \`npm run build\`.\n`;
  const css = ["base.css", `${name}.css`]
    .map((file) => join(SRC, file))
    .filter((path) => existsSync(path))
    .map((path) => `/* ---- ${relative(ROOT, path)} ---- */\n${readFileSync(path, "utf8").trim()}\n`);
  return {
    js: `${banner}\n${parts.join("\n")}`,
    css: `/* Generated by widgets/build.mjs from widgets/src. */\n\n${css.join("\n")}`,
  };
}

function main() {
  const check = process.argv.includes("--check");
  /** @type {string[]} */
  const stale = [];
  mkdirSync(OUT, { recursive: true });
  for (const name of WIDGETS) {
    const { js, css } = bundle(name);
    for (const [file, text] of [[`${name}.js`, js], [`${name}.css`, css]]) {
      const path = join(OUT, file ?? "");
      const current = existsSync(path) ? readFileSync(path, "utf8") : null;
      if (current === text) continue;
      if (check) stale.push(relative(ROOT, path));
      else writeFileSync(path, text ?? "");
    }
  }
  if (stale.length) {
    console.error(`out of date: ${stale.join(", ")}; run \`npm run build\` in widgets/ and commit bundle/`);
    process.exit(1);
  }
}

if (process.argv[1] && resolve(process.argv[1]) === fileURLToPath(import.meta.url)) main();
