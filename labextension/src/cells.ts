/**
 * Cell lookup and per-cell revisions on a notebook's shared model.
 *
 * A full read of a large notebook is dominated by serialising cells, so each cell gets a
 * revision number that changes whenever the cell does; a reader that already holds a cell at
 * its current revision gets only `[id, rev]` back instead of the whole cell again.
 */
import type { ISharedCell, ISharedNotebook } from '@jupyter/ydoc';

import { BridgeError } from './protocol';

const revisions = new WeakMap<ISharedCell, number>();
let counter = 0;

/** The cell's current revision; unique across cells, so `[id, rev]` names one exact content. */
export function revisionOf(cell: ISharedCell): number {
  let rev = revisions.get(cell);
  if (rev === undefined) {
    rev = ++counter;
    revisions.set(cell, rev);
    cell.changed.connect(bump);
  }
  return rev;
}

function bump(cell: ISharedCell): void {
  revisions.set(cell, ++counter);
}

/** The position of the cell with id `id`, or a `notebook_cell_not_found` error. */
export function indexOf(nb: ISharedNotebook, id: unknown): number {
  if (typeof id !== 'string') {
    throw new BridgeError('bridge_bad_request', 'cell_id must be a string.');
  }
  const cells = nb.cells;
  for (let i = 0; i < cells.length; i++) {
    if (cells[i].id === id) {
      return i;
    }
  }
  throw new BridgeError(
    'notebook_cell_not_found',
    `No cell with id ${JSON.stringify(id)} in the notebook; read it again to see its cells.`
  );
}

/** Whether any cell has id `id`. */
export function hasCell(nb: ISharedNotebook, id: string): boolean {
  return nb.cells.some(cell => cell.id === id);
}
