// The Content-Security-Policy of the workbench, shared by the browser mode (HTTP header) and the
// Electron window (response header on its own pages). Scripts only from the app itself; Monaco
// needs inline styles, blob: workers and data: fonts; the API is reached only at `connect`.
export function contentSecurityPolicy(o: { connect?: string[] } = {}): string {
  return [
    "default-src 'none'",
    "script-src 'self'",
    "style-src 'self' 'unsafe-inline'",
    "img-src 'self' data: blob:",
    "font-src 'self' data:",
    "worker-src 'self' blob:",
    `connect-src 'self'${o.connect?.length ? ' ' + o.connect.join(' ') : ''}`,
    "base-uri 'none'",
    "form-action 'none'",
    "frame-ancestors 'none'",
    "object-src 'none'",
  ].join('; ');
}
