// Shared shapes of the widgets: global so that the bundled single-file widgets check as well.

/** The part of anywidget's model the widgets use. */
interface AnyModel {
  get(name: string): any;
  set(name: string, value: unknown): void;
  on(event: string, callback: (...args: any[]) => void): void;
  off(event?: string | null, callback?: ((...args: any[]) => void) | null): void;
  send(content: unknown, callbacks?: unknown, buffers?: unknown): void;
  save_changes(): void;
}

/** What anywidget passes to render(). */
interface RenderArgs {
  model: AnyModel;
  el: HTMLElement;
}

/** A child accepted by h(): nodes, text, or nothing. */
type Child = Node | string | number | null | undefined | false;

type TokenType =
  | "plain" | "keyword" | "string" | "comment" | "number" | "atom" | "builtin"
  | "property" | "variable" | "command" | "heading" | "emphasis" | "link" | "meta";

interface Token {
  type: TokenType;
  text: string;
}

/** Highlighter state carried from one line to the next (an open string or comment). */
interface HighlightState {
  open: { end: string; type: TokenType; escapes: boolean } | null;
  fence?: boolean;
}

interface DiffLine {
  type: "ctx" | "add" | "del";
  text: string;
  oldNo: number | null;
  newNo: number | null;
}

interface Hunk {
  header: string;
  lines: DiffLine[];
}

interface DiffStats {
  added: number;
  removed: number;
}

interface TodoEntry {
  content: string;
  status: "pending" | "in_progress" | "completed";
}

/** One transcript entry, as the Python side appends it. */
interface TranscriptItem {
  id: number;
  rev: number;
  kind: "run" | "text" | "reasoning" | "tool" | "notice";
  text?: string;
  model?: string;
  prompt?: string;
  level?: string;
  name?: string;
  title?: string;
  args?: string;
  status?: "running" | "waiting" | "done" | "error" | "denied" | "cancelled";
  seconds?: number;
  preview?: string;
  output?: string;
  error?: string;
  reason?: string;
  allowed?: string;
  diff?: string;
  group?: "read" | "search";
  todos?: TodoEntry[];
}

/** One tool of the catalogue. */
interface ToolSummary {
  name: string;
  server?: string | null;
  description: string;
  kind?: string;
  deferred: boolean;
  revealed: boolean;
  disabled: boolean;
  hidden?: boolean;
  read_only: boolean;
  visible?: boolean;
  error?: string | null;
}

interface AskOption {
  label: string;
  description?: string;
}
