// Electron's main process, kept thin: one window, the API contract on IPC through the shared
// dispatcher (every argument validated), every call's sender checked, navigation and new windows
// denied, a strict CSP. Optimisation runs go to a worker thread (out/main/worker.js, its own build
// entry); builds and the harness run in child processes. The LLM API key is encrypted with the OS
// keychain (safeStorage) and never sent back to the renderer.
import { app, BrowserWindow, dialog, ipcMain, safeStorage, session, shell, type IpcMainInvokeEvent } from 'electron';
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { ApiService, type SecretStore } from '../../core/service.js';
import { createDispatcher } from '../../core/dispatch.js';
import { IPC_CALL, IPC_EVENT, IPC_PICK_FOLDER, IPC_SAVE_AS } from '../../contract/methods.js';
import { contentSecurityPolicy } from '../../core/csp.js';
import { isAllowedNavigation, isTrustedSender, type TrustedWindow } from './sender.js';

const here = path.dirname(fileURLToPath(import.meta.url));
const devUrl = process.env.ELECTRON_RENDERER_URL;
const pageUrl = devUrl ?? pathToFileURL(path.join(here, '../renderer/index.html')).href;

let win: BrowserWindow | null = null;

/** The LLM API key, encrypted by the OS (safeStorage) in the app's data folder; never in plain text. */
function keychain(): SecretStore {
  const file = (): string => path.join(app.getPath('userData'), 'llm-api-key.enc');
  return {
    available: () => safeStorage.isEncryptionAvailable(),
    save(key) {
      if (!safeStorage.isEncryptionAvailable()) throw new Error('OS encryption (safeStorage) is not available: the key is not saved');
      fs.mkdirSync(path.dirname(file()), { recursive: true });
      fs.writeFileSync(file(), safeStorage.encryptString(key), { mode: 0o600 });
    },
    load() {
      try {
        return safeStorage.decryptString(fs.readFileSync(file()));
      } catch {
        return undefined;
      }
    },
    clear() {
      fs.rmSync(file(), { force: true });
    },
  };
}
let trusted: TrustedWindow | null = null;

function checkSender(e: IpcMainInvokeEvent): void {
  const frame = e.senderFrame;
  const ok =
    !!trusted &&
    isTrustedSender({ webContentsId: e.sender.id, frameUrl: frame?.url ?? null, isMainFrame: !!frame && frame === e.sender.mainFrame }, trusted);
  if (!ok) throw new Error('refused: IPC from an unexpected sender');
}

function createWindow(service: ApiService): void {
  win = new BrowserWindow({
    width: 1440,
    height: 920,
    title: 'KernelDuel',
    show: false,
    webPreferences: {
      preload: path.join(here, '../preload/index.cjs'),
      contextIsolation: true,
      sandbox: true,
      nodeIntegration: false,
      nodeIntegrationInWorker: false,
      webSecurity: true,
      spellcheck: false,
    },
  });
  trusted = { webContentsId: win.webContents.id, pageUrl };
  win.once('ready-to-show', () => win?.show());
  win.webContents.setWindowOpenHandler(({ url }) => {
    // Links to documentation open in the user's browser, never in an app window.
    if (/^https:\/\//.test(url)) void shell.openExternal(url);
    return { action: 'deny' };
  });
  win.webContents.on('will-navigate', (e, url) => {
    if (!trusted || !isAllowedNavigation(url, trusted)) e.preventDefault();
  });
  win.webContents.on('will-redirect', (e, url) => {
    if (!trusted || !isAllowedNavigation(url, trusted)) e.preventDefault();
  });
  const unsubscribe = service.on((ev) => {
    if (win && !win.isDestroyed()) win.webContents.send(IPC_EVENT, ev);
  });
  win.on('closed', () => {
    unsubscribe();
    win = null;
    trusted = null;
  });
  void win.loadURL(pageUrl);
}

app.whenReady().then(() => {
  const csp = contentSecurityPolicy({ connect: devUrl ? [devUrl.replace(/^http/, 'ws')] : [] });
  session.defaultSession.webRequest.onHeadersReceived((details, cb) => {
    cb({ responseHeaders: { ...details.responseHeaders, 'Content-Security-Policy': [csp] } });
  });
  session.defaultSession.setPermissionRequestHandler((_wc, _perm, cb) => cb(false));
  app.on('web-contents-created', (_e, contents) => {
    contents.on('will-attach-webview', (e) => e.preventDefault());
  });

  // The worker is its own build entry (electron.vite.config.ts), next to this file.
  const workerFile = path.join(here, 'worker.js');
  const service = new ApiService({ mode: 'electron', secrets: keychain(), worker: fs.existsSync(workerFile) ? { file: workerFile } : false });
  service.warm();
  const dispatch = createDispatcher(service.handlers());
  ipcMain.handle(IPC_CALL, async (e, method: unknown, params: unknown) => {
    checkSender(e);
    return dispatch(method, params);
  });
  ipcMain.handle(IPC_SAVE_AS, async (e, fileName: unknown, content: unknown) => {
    checkSender(e);
    if (typeof fileName !== 'string' || typeof content !== 'string' || fileName.length > 255 || /[\\/]/.test(fileName)) throw new Error('refused: bad save request');
    const r = await dialog.showSaveDialog(win!, { defaultPath: fileName });
    if (r.canceled || !r.filePath) return { saved: false };
    fs.writeFileSync(r.filePath, content);
    return { saved: true, path: r.filePath };
  });
  ipcMain.handle(IPC_PICK_FOLDER, async (e) => {
    checkSender(e);
    const r = await dialog.showOpenDialog(win!, { properties: ['openDirectory'] });
    return r.canceled ? null : (r.filePaths[0] ?? null);
  });
  createWindow(service);
  app.on('activate', () => {
    if (BrowserWindow.getAllWindows().length === 0) createWindow(service);
  });
  app.on('before-quit', () => void service.stopAll());
});

app.on('window-all-closed', () => {
  if (process.platform !== 'darwin') app.quit();
});
