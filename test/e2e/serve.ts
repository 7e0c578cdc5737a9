// Starts the real backend in browser mode (`kernelduel serve --port 0 --json` in a child process,
// with its own KERNELDUEL_HOME) and returns the page's URL with its token. Used by the e2e tests
// and by bench/workbench-scale.ts.
import { spawn, type ChildProcess } from 'node:child_process';
import path from 'node:path';
import { ROOT } from './build-renderer.js';

export async function startServe(home: string, extraArgs: string[] = []): Promise<{ server: ChildProcess; url: string; stderrTail: () => string }> {
  const server = spawn(process.execPath, ['--import', 'tsx', path.join(ROOT, 'main', 'doors', 'cli', 'index.ts'), 'serve', '--port', '0', '--json', ...extraArgs], {
    cwd: ROOT, env: { ...process.env, KERNELDUEL_HOME: home }, stdio: ['ignore', 'pipe', 'pipe'],
  });
  let err = '';
  const url = await new Promise<string>((resolve, reject) => {
    let out = '';
    // 90 s: alone it prints its URL within seconds, but in the full suite on 2 cores, beside
    // nvcc builds and REPLAY searches, one start took more than 30 s (2026-12-07).
    const t = setTimeout(() => reject(new Error(`kernelduel serve did not start in 90 s: ${err}`)), 90_000);
    server.stderr!.on('data', (d) => (err = (err + d).slice(-20_000)));
    server.stdout!.on('data', (d) => {
      out += d;
      const line = out.split('\n').find((l) => l.startsWith('{'));
      if (line) {
        clearTimeout(t);
        resolve((JSON.parse(line) as { url: string }).url);
      }
    });
    server.on('exit', (c) => reject(new Error(`kernelduel serve exited with ${c}: ${err}`)));
  });
  // What the server said on stderr lately (the last 2,000 characters): for a test's failure message.
  return { server, url, stderrTail: () => err.slice(-2000) };
}
