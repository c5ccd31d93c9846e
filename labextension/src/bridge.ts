/**
 * One bridge comm: answers the kernel's requests on the notebook its tab shows.
 *
 * Every tab on the kernel receives every request (comm messages from the kernel are broadcast);
 * only the tab whose kernel client id is the request's `to` answers, so the agent edits the
 * tab that ran its cell. Handlers never await: the work is done on the shared model and the
 * reply sent before the handler returns (`save` replies when the save settles).
 */
import { PageConfig } from '@jupyterlab/coreutils';
import type { NotebookPanel } from '@jupyterlab/notebook';
import type { Kernel, KernelMessage } from '@jupyterlab/services';

import * as ops from './ops';
import { BridgeError, PROTOCOL, VERSION, type IRequest, type Result } from './protocol';
import { mark } from './reveal';

/** Finds the notebook panel a kernel connection belongs to (null once it is closed). */
export type PanelFinder = () => NotebookPanel | null;

type Handler = (panel: NotebookPanel, request: IRequest) => Result;

/** Answer the kernel on `comm` for the notebook `find` returns; replies to the `hello` at once. */
export function serve(
  kernel: Kernel.IKernelConnection,
  comm: Kernel.IComm,
  open: KernelMessage.ICommOpenMsg,
  find: PanelFinder
): void {
  const cache: ops.IReadCache = { epoch: null, sent: new Map() };
  const handlers: Record<string, Handler> = {
    hello: panel => hello(kernel, panel),
    read: (panel, request) => ops.read(shared(panel), request, cache),
    replace_source: (panel, request) => marked(panel, request, ops.replaceSource),
    insert: (panel, request) => marked(panel, request, ops.insert),
    delete: (panel, request) => ops.remove(shared(panel), request),
    move: (panel, request) => marked(panel, request, ops.move),
    set_type: (panel, request) => marked(panel, request, ops.setType),
    set_outputs: (panel, request) => marked(panel, request, ops.setOutputs),
    ensure_persistent_ids: panel => ops.ensurePersistentIds(shared(panel)),
    selection: panel => ({ cell_id: panel.content.activeCell?.model.id ?? null })
  };

  const answer = (request: IRequest): void => {
    if (request.to && request.to !== kernel.clientId) {
      return;
    }
    const reply = (result: Result): void => {
      comm.send({ rid: request.rid, ok: true, ...result });
    };
    const fail = (code: string, message: string): void => {
      comm.send({ rid: request.rid, ok: false, code, message });
    };
    const panel = find();
    if (panel === null || panel.isDisposed) {
      fail('notebook_not_open', 'The notebook is no longer open in this tab.');
      return;
    }
    if (request.op === 'save') {
      panel.context.save().then(
        () => reply({}),
        (err: unknown) => fail('notebook_edit_failure', `Saving the notebook failed: ${String(err)}`)
      );
      return;
    }
    const handler = handlers[request.op];
    if (handler === undefined) {
      fail('bridge_bad_request', `Unknown operation ${JSON.stringify(request.op)}.`);
      return;
    }
    try {
      reply(handler(panel, request));
    } catch (err) {
      if (err instanceof BridgeError) {
        fail(err.code, err.message);
      } else {
        fail('notebook_edit_failure', `The notebook refused the change: ${String(err)}`);
      }
    }
  };

  comm.onMsg = (msg: KernelMessage.ICommMsgMsg): void => {
    answer(msg.content.data as unknown as IRequest);
  };
  answer(open.content.data as unknown as IRequest);
}

/** Run an edit, then mark the cell it changed once the notebook has drawn it. */
function marked(
  panel: NotebookPanel,
  request: IRequest,
  op: (nb: ReturnType<typeof shared>, args: IRequest) => Result
): Result {
  const result = op(shared(panel), request);
  const id = request.cell_id;
  if (typeof id === 'string') {
    window.requestAnimationFrame(() => mark(panel, id));
  }
  return result;
}

function shared(panel: NotebookPanel) {
  const model = panel.content.model;
  if (model === null) {
    throw new BridgeError('notebook_not_open', 'The notebook has no model yet; try again.');
  }
  return model.sharedModel;
}

function hello(kernel: Kernel.IKernelConnection, panel: NotebookPanel): Result {
  return {
    protocol: PROTOCOL,
    version: VERSION,
    client: kernel.clientId,
    path: panel.context.path,
    root: PageConfig.getOption('serverRoot'),
    app: PageConfig.getOption('appName')
  };
}
