// Who may call the engine over IPC: only the main frame of our own window, showing our own page.
// Pure (no electron import) so the rule is unit-tested; main/doors/electron/index.ts feeds it the facts.

export interface SenderFacts {
  /** webContents.id of the sender. */
  webContentsId: number;
  /** URL of the frame that sent the message (event.senderFrame.url); null when the frame is gone. */
  frameUrl: string | null;
  /** The sending frame is its page's main frame (no iframes). */
  isMainFrame: boolean;
}

export interface TrustedWindow {
  webContentsId: number;
  /** Where our page comes from: a file URL of out/renderer/index.html, or the dev server's origin. */
  pageUrl: string;
}

/** The origin-like key of a URL: scheme+host+port for http(s), the full path for file: URLs. */
export function pageKey(url: string): string | null {
  try {
    const u = new URL(url);
    if (u.protocol === 'file:') return `file://${u.pathname}`;
    if (u.protocol === 'http:' || u.protocol === 'https:') return u.origin;
    return null;
  } catch {
    return null;
  }
}

export function isTrustedSender(s: SenderFacts, w: TrustedWindow): boolean {
  if (s.webContentsId !== w.webContentsId) return false;
  if (!s.isMainFrame || !s.frameUrl) return false;
  const a = pageKey(s.frameUrl);
  return a !== null && a === pageKey(w.pageUrl);
}

/** Navigation is allowed only to our own page (a reload); everything else is denied. */
export function isAllowedNavigation(url: string, w: Pick<TrustedWindow, 'pageUrl'>): boolean {
  const a = pageKey(url);
  return a !== null && a === pageKey(w.pageUrl);
}
