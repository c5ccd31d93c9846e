/**
 * The bridge operations on a notebook's shared model: synchronous, one undo step per edit.
 *
 * Everything here runs inside a comm message handler, which must not await (the kernel
 * connection holds its message queue until the handler settles), so each operation completes
 * on the model before it returns. Each edit is one shared-model transaction between two
 * `stopCapturing` marks, so one undo takes back exactly one agent edit: a replaced source is
 * a transaction of the cell itself, recorded by the cell's own undo manager (the one its
 * editor's Ctrl+Z uses; with document-wide undo on, the cell's transactions are the
 * notebook's), and changes to the cell list are the notebook's (`z` in command mode).
 */
import type { ISharedCodeCell, ISharedNotebook } from '@jupyter/ydoc';

import { hasCell, indexOf, revisionOf } from './cells';
import { BridgeError, type Result } from './protocol';

const CELL_TYPES = new Set(['code', 'markdown', 'raw']);
const VALID_ID = /^[a-zA-Z0-9_-]{1,64}$/;

/** What a reader already holds, per comm: the revision sent for each cell id in one epoch. */
export interface IReadCache {
  epoch: unknown;
  sent: Map<string, number>;
}

type Json = Record<string, unknown>;

interface IUndoable {
  undoManager?: { stopCapturing(): void } | null;
}

/** The cells (changed ones in full, the others as `[id, rev]`), metadata and format version. */
export function read(nb: ISharedNotebook, args: Json, cache: IReadCache): Result {
  const useCache = args.cache !== undefined && args.cache !== null;
  if (!useCache || cache.epoch !== args.cache) {
    cache.sent.clear();
    cache.epoch = useCache ? args.cache : null;
  }
  const cells = nb.cells.map(cell => {
    const rev = revisionOf(cell);
    if (useCache && cache.sent.get(cell.id) === rev) {
      return [cell.id, rev];
    }
    if (useCache) {
      cache.sent.set(cell.id, rev);
    }
    return [cell.id, rev, cell.toJSON()];
  });
  return {
    cells,
    metadata: nb.getMetadata(),
    nbformat: nb.nbformat,
    nbformat_minor: nb.nbformat_minor
  };
}

/** Set a cell's source; with `clear_outputs` a code cell also loses its outputs and count. */
export function replaceSource(nb: ISharedNotebook, args: Json): Result {
  const cell = nb.cells[indexOf(nb, args.cell_id)];
  const source = text(args.source, 'source');
  const undo = (cell as unknown as IUndoable).undoManager;
  undo?.stopCapturing();
  cell.transact(() => {
    cell.setSource(source);
    if (args.clear_outputs === true && cell.cell_type === 'code') {
      const code = cell as ISharedCodeCell;
      code.setOutputs([]);
      code.execution_count = null;
    }
  }, true);
  undo?.stopCapturing();
  return {};
}

/** Insert a cell with the caller's id after `after` (null: at the top). */
export function insert(nb: ISharedNotebook, args: Json): Result {
  const cellType = kind(args.cell_type);
  const id = text(args.cell_id, 'cell_id');
  if (!VALID_ID.test(id) || hasCell(nb, id)) {
    throw new BridgeError(
      'notebook_edit_failure',
      `Cannot insert a cell with id ${JSON.stringify(id)}: it is not a valid unused cell id.`
    );
  }
  const at = args.after === null || args.after === undefined ? 0 : indexOf(nb, args.after) + 1;
  const source = text(args.source, 'source');
  edit(nb, () => {
    nb.insertCell(at, { id, cell_type: cellType, source, metadata: {} });
  });
  return {};
}

/** Remove a cell. */
export function remove(nb: ISharedNotebook, args: Json): Result {
  const i = indexOf(nb, args.cell_id);
  edit(nb, () => nb.deleteCell(i));
  return {};
}

/** Move a cell after `after` (null: to the top). */
export function move(nb: ISharedNotebook, args: Json): Result {
  const from = indexOf(nb, args.cell_id);
  if (args.after === args.cell_id) {
    throw new BridgeError('notebook_edit_failure', 'Cannot move a cell after itself.');
  }
  let to = 0;
  if (args.after !== null && args.after !== undefined) {
    const after = indexOf(nb, args.after);
    to = after < from ? after + 1 : after;
  }
  if (to !== from) {
    edit(nb, () => nb.moveCell(from, to));
  }
  return {};
}

/** Change a cell's type, keeping its id, source and metadata (outputs only stay on code). */
export function setType(nb: ISharedNotebook, args: Json): Result {
  const i = indexOf(nb, args.cell_id);
  const cellType = kind(args.cell_type);
  const old = nb.cells[i];
  if (old.cell_type === cellType) {
    return {};
  }
  const raw = old.toJSON() as Json;
  const cell: Json = {
    id: old.id,
    cell_type: cellType,
    source: old.getSource(),
    metadata: raw.metadata ?? {}
  };
  if (cellType === 'code') {
    cell.outputs = [];
    cell.execution_count = null;
  } else if (raw.attachments !== undefined) {
    cell.attachments = raw.attachments;
  }
  edit(nb, () => {
    nb.deleteCell(i);
    nb.insertCell(i, cell as never);
  });
  return {};
}

/** Replace a code cell's outputs and execution count. */
export function setOutputs(nb: ISharedNotebook, args: Json): Result {
  const cell = nb.cells[indexOf(nb, args.cell_id)];
  if (cell.cell_type !== 'code') {
    throw new BridgeError(
      'notebook_edit_failure',
      `Cell ${cell.id} is a ${cell.cell_type} cell; only code cells have outputs.`
    );
  }
  if (!Array.isArray(args.outputs)) {
    throw new BridgeError('bridge_bad_request', 'outputs must be a list.');
  }
  const count = args.execution_count;
  const code = cell as ISharedCodeCell;
  edit(nb, () => {
    code.setOutputs(args.outputs as never);
    code.execution_count = typeof count === 'number' ? count : null;
  });
  return {};
}

/** Make the ids persistent on save: nbformat 4.4 files are saved as 4.5 (with ids). */
export function ensurePersistentIds(nb: ISharedNotebook): Result {
  if (nb.nbformat > 4 || (nb.nbformat === 4 && nb.nbformat_minor >= 5)) {
    return { changed: false };
  }
  const writable = nb as unknown as { nbformat: number; nbformat_minor: number };
  nb.transact(() => {
    writable.nbformat = 4;
    writable.nbformat_minor = 5;
  }, false);
  return { changed: true };
}

/** Apply `change` as one transaction that is its own undo step. */
function edit(nb: ISharedNotebook, change: () => void): void {
  const undo = (nb as unknown as IUndoable).undoManager;
  undo?.stopCapturing();
  nb.transact(change, true);
  undo?.stopCapturing();
}

function text(value: unknown, name: string): string {
  if (typeof value !== 'string') {
    throw new BridgeError('bridge_bad_request', `${name} must be a string.`);
  }
  return value;
}

function kind(value: unknown): string {
  if (typeof value !== 'string' || !CELL_TYPES.has(value)) {
    throw new BridgeError(
      'notebook_edit_failure',
      `Unknown cell type ${JSON.stringify(value)}; use code, markdown or raw.`
    );
  }
  return value;
}
