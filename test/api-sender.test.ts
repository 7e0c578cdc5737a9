import { describe, expect, it } from 'vitest';
import { isAllowedNavigation, isTrustedSender } from '../main/doors/electron/sender.js';

const win = { webContentsId: 7, pageUrl: 'file:///opt/kernelduel/out/renderer/index.html' };

describe('IPC sender check', () => {
  it('accepts the main frame of our window showing our page', () => {
    expect(isTrustedSender({ webContentsId: 7, frameUrl: 'file:///opt/kernelduel/out/renderer/index.html#/run', isMainFrame: true }, win)).toBe(true);
  });

  it('refuses another webContents, a subframe, a foreign page, or a vanished frame', () => {
    expect(isTrustedSender({ webContentsId: 8, frameUrl: win.pageUrl, isMainFrame: true }, win)).toBe(false);
    expect(isTrustedSender({ webContentsId: 7, frameUrl: win.pageUrl, isMainFrame: false }, win)).toBe(false);
    expect(isTrustedSender({ webContentsId: 7, frameUrl: 'https://evil.example/index.html', isMainFrame: true }, win)).toBe(false);
    expect(isTrustedSender({ webContentsId: 7, frameUrl: 'file:///tmp/other.html', isMainFrame: true }, win)).toBe(false);
    expect(isTrustedSender({ webContentsId: 7, frameUrl: null, isMainFrame: true }, win)).toBe(false);
  });

  it('a dev-server window trusts only its own origin', () => {
    const dev = { webContentsId: 1, pageUrl: 'http://localhost:5173/' };
    expect(isTrustedSender({ webContentsId: 1, frameUrl: 'http://localhost:5173/index.html', isMainFrame: true }, dev)).toBe(true);
    expect(isTrustedSender({ webContentsId: 1, frameUrl: 'http://localhost:5174/', isMainFrame: true }, dev)).toBe(false);
  });

  it('denies navigation away from our page', () => {
    expect(isAllowedNavigation('https://example.com/', win)).toBe(false);
    expect(isAllowedNavigation('file:///etc/passwd', win)).toBe(false);
    expect(isAllowedNavigation(win.pageUrl, win)).toBe(true);
  });
});
