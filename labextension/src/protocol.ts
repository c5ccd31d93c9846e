/**
 * The messages between the kernel's agent and this extension, one comm per kernel connection.
 *
 * The kernel opens a comm on TARGET with a `hello`; every tab on that kernel answers with its
 * client id, so the kernel can address the tab that ran the agent's cell (`to`). Requests carry
 * a request id (`rid`); each reply echoes it with `ok` and either the result or an error code.
 */

/** The comm target the kernel opens. */
export const TARGET = 'agent_ext.bridge';

/** Bumped when a message changes shape; the kernel refuses a different one. */
export const PROTOCOL = 1;

/** This extension's version, reported in the handshake. */
export const VERSION = '0.1.0';

/** Error codes, shared with the kernel's NotebookError codes. */
export type ErrorCode =
  | 'notebook_cell_not_found'
  | 'notebook_edit_failure'
  | 'notebook_not_open'
  | 'bridge_bad_request';

/** A request from the kernel: `op` names the operation, the rest are its arguments. */
export interface IRequest {
  op: string;
  rid: number;
  to?: string | null;
  [key: string]: unknown;
}

/** A successful reply's payload (without `rid` and `ok`). */
export type Result = Record<string, unknown>;

/** A failed operation; becomes `{ok: false, code, message}`. */
export class BridgeError extends Error {
  constructor(
    readonly code: ErrorCode,
    message: string
  ) {
    super(message);
  }
}
