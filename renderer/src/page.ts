// What this page runs in: the desktop app (the preload's `window.kernelduel` bridge) or a browser
// tab served by `kernelduel serve`. Picks the transport, and saves files the way each can.
import type { Transport } from '../../main/contract/api.js';
import { browserTransport, electronTransport, type DesktopBridge } from './transport.js';

declare global {
  interface Window {
    kernelduel?: DesktopBridge;
  }
}

export function createTransport(): Transport {
  if (window.kernelduel) return electronTransport(window.kernelduel);
  const proto = location.protocol === 'https:' ? 'wss:' : 'ws:';
  return browserTransport(`${proto}//${location.host}/api`);
}

/** Saves a file: a save dialog in Electron, a download in the browser. */
export async function saveFile(fileName: string, content: string, mimeType: string): Promise<string> {
  if (window.kernelduel) {
    const r = await window.kernelduel.saveAs(fileName, content);
    return r.saved ? `saved ${r.path}` : 'not saved';
  }
  const url = URL.createObjectURL(new Blob([content], { type: mimeType }));
  const a = document.createElement('a');
  a.href = url;
  a.download = fileName;
  document.body.appendChild(a);
  a.click();
  a.remove();
  setTimeout(() => URL.revokeObjectURL(url), 10_000);
  return `downloaded ${fileName}`;
}
