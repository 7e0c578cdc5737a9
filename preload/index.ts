// The only bridge between the sandboxed renderer and the main process: the contract's method
// names (nothing else can be called), event subscription, and the two desktop dialogs. Never
// exposes ipcRenderer itself. Runs sandboxed: imports nothing but electron and a plain constant file.
import { contextBridge, ipcRenderer, type IpcRendererEvent } from 'electron';
import { IPC_CALL, IPC_EVENT, IPC_PICK_FOLDER, IPC_SAVE_AS, isMethodName } from '../main/contract/methods.js';

const api = {
  call(method: string, params?: unknown): Promise<unknown> {
    if (!isMethodName(method)) return Promise.reject(new Error(`unknown method ${String(method)}`));
    return ipcRenderer.invoke(IPC_CALL, method, params);
  },
  subscribe(listener: (event: unknown) => void): () => void {
    const h = (_e: IpcRendererEvent, ev: unknown): void => listener(ev);
    ipcRenderer.on(IPC_EVENT, h);
    return () => void ipcRenderer.removeListener(IPC_EVENT, h);
  },
  saveAs(fileName: string, content: string): Promise<{ saved: boolean; path?: string }> {
    return ipcRenderer.invoke(IPC_SAVE_AS, String(fileName), String(content));
  },
  pickFolder(): Promise<string | null> {
    return ipcRenderer.invoke(IPC_PICK_FOLDER);
  },
};

contextBridge.exposeInMainWorld('kernelduel', api);

export type KernelDuelBridge = typeof api;
