/**
 * agent-ext: the comm bridge between the agent in the kernel and the notebook open in the tab.
 *
 * The bridge target is registered once on every kernel connection a notebook gets (the first
 * one and each after a kernel change); a kernel restart keeps the connection and so the target.
 */
import type { JupyterFrontEnd, JupyterFrontEndPlugin } from '@jupyterlab/application';
import { INotebookTracker, type NotebookPanel } from '@jupyterlab/notebook';
import type { Kernel } from '@jupyterlab/services';

import { serve } from './bridge';
import { TARGET } from './protocol';
import { installStyle, listen } from './reveal';

const registered = new WeakSet<Kernel.IKernelConnection>();

function watch(tracker: INotebookTracker, panel: NotebookPanel): void {
  const register = (): void => {
    const kernel = panel.sessionContext.session?.kernel;
    if (!kernel || registered.has(kernel)) {
      return;
    }
    registered.add(kernel);
    const find = (): NotebookPanel | null =>
      tracker.find(p => !p.isDisposed && p.sessionContext.session?.kernel === kernel) ?? null;
    kernel.registerCommTarget(TARGET, (comm, msg) => serve(kernel, comm, msg, find));
  };
  panel.sessionContext.kernelChanged.connect(register);
  register();
  listen(panel);
}

const plugin: JupyterFrontEndPlugin<void> = {
  id: 'agent-ext:bridge',
  description: 'Lets the agent_ext agent in the kernel read and edit this notebook.',
  autoStart: true,
  requires: [INotebookTracker],
  activate: (_app: JupyterFrontEnd, tracker: INotebookTracker): void => {
    installStyle();
    tracker.widgetAdded.connect((_, panel) => watch(tracker, panel));
    tracker.forEach(panel => watch(tracker, panel));
  }
};

export default plugin;
