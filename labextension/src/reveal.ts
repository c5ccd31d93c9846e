/**
 * Showing the user a cell the agent names: scroll it into view, and mark it for a moment.
 *
 * The approval card's "show cell" link dispatches `REVEAL_EVENT` (bubbling, with the cell id)
 * from inside the notebook's output area; the panel holding the card answers it. A cell the
 * agent changed is marked the same way once the change has landed, so the eye finds it.
 */
import type { NotebookPanel } from '@jupyterlab/notebook';

/** The DOM event the card dispatches: `detail.cellId` is the nbformat cell id. */
export const REVEAL_EVENT = 'agent-ext:reveal-cell';

/** The class a changed or revealed cell carries for `MARK_MS`. */
export const MARK_CLASS = 'ae-agent-marked';
export const MARK_MS = 3000;

const STYLE = `
.jp-Cell.${MARK_CLASS} {
  outline: 2px solid var(--jp-brand-color1, #1976d2);
  outline-offset: -2px;
  transition: outline-color 0.3s;
}`;

const timers = new WeakMap<HTMLElement, number>();

/** Add the mark's style sheet to the page once. */
export function installStyle(): void {
  if (document.getElementById('agent-ext-mark-style') !== null) {
    return;
  }
  const style = document.createElement('style');
  style.id = 'agent-ext-mark-style';
  style.textContent = STYLE;
  document.head.appendChild(style);
}

/** The cell widget with id `cellId` in `panel`, or null. */
function cellOf(panel: NotebookPanel, cellId: string) {
  return panel.content.widgets.find(cell => cell.model.id === cellId) ?? null;
}

/** Mark the cell `cellId` for a few seconds (restarting the time when it is marked again). */
export function mark(panel: NotebookPanel, cellId: string): boolean {
  const cell = cellOf(panel, cellId);
  if (cell === null) {
    return false;
  }
  const node = cell.node;
  node.classList.add(MARK_CLASS);
  const before = timers.get(node);
  if (before !== undefined) {
    window.clearTimeout(before);
  }
  timers.set(
    node,
    window.setTimeout(() => {
      node.classList.remove(MARK_CLASS);
      timers.delete(node);
    }, MARK_MS)
  );
  return true;
}

/**
 * Scroll the cell `cellId` into view and mark it; false when the notebook has no such cell.
 * Selection and focus stay where they are (`scrollToCell` would activate the cell, and the
 * next key the user types for the card would go to its editor instead).
 */
export function reveal(panel: NotebookPanel, cellId: string): boolean {
  const notebook = panel.content;
  const index = notebook.widgets.findIndex(cell => cell.model.id === cellId);
  if (index < 0) {
    return false;
  }
  void notebook
    .scrollToItem(index, 'center')
    .catch(() => notebook.widgets[index]?.node.scrollIntoView({ block: 'center' }))
    .then(() => mark(panel, cellId));
  return true;
}

/** Answer the card's reveal events on `panel`'s node. */
export function listen(panel: NotebookPanel): void {
  panel.node.addEventListener(REVEAL_EVENT, (event: Event) => {
    const detail = (event as CustomEvent<{ cellId?: unknown }>).detail;
    if (typeof detail?.cellId === 'string' && reveal(panel, detail.cellId)) {
      event.preventDefault();
    }
  });
}
