import { useApp } from '../store.js';

export function GpusView() {
  const env = useApp((s) => s.env);
  if (!env) return <p>Detecting GPUs and the CUDA toolchain…</p>;
  return (
    <div className="gpus">
      <h2>GPUs and environment</h2>
      {env.gpus.length === 0 ? (
        <div className="empty-state" data-testid="no-gpu">
          <h3>No NVIDIA GPU detected</h3>
          <p>
            {env.canCompile
              ? 'Compile-only: variants are built with nvcc and their resources (registers, shared memory, spills) reported, but not checked or timed.'
              : 'Without nvcc nothing can be built here.'}{' '}
            Replays of recorded spaces work without a GPU and are labelled REPLAY.
          </p>
        </div>
      ) : (
        <table className="grid" data-testid="gpu-table">
          <thead>
            <tr><th>#</th><th>name</th><th>compute capability</th><th>memory</th><th>SM clock</th><th>memory clock</th><th>driver</th><th>UUID</th></tr>
          </thead>
          <tbody>
            {env.gpus.map((g) => (
              <tr key={g.index}>
                <td>{g.index}</td><td>{g.name}</td><td>{g.computeCapability} ({g.arch || '?'})</td><td>{(g.memoryTotalMiB / 1024).toFixed(0)} GiB</td>
                <td>{g.smClockMHz ?? '?'} / {g.maxSmClockMHz ?? '?'} MHz</td><td>{g.memClockMHz ?? '?'} / {g.maxMemClockMHz ?? '?'} MHz</td><td>{g.driverVersion}</td><td className="mono">{g.uuid}</td>
              </tr>
            ))}
          </tbody>
        </table>
      )}
      <h3>CUDA toolchain</h3>
      <dl className="facts">
        <dt>nvcc</dt><dd className="mono">{env.toolchain.nvcc ?? 'not found'}</dd>
        <dt>version</dt><dd>{env.toolchain.version ?? '-'}</dd>
        <dt>targets</dt><dd className="mono">{env.toolchain.targets.join(' ') || '-'}</dd>
        <dt>can build</dt><dd>{env.canCompile ? 'yes' : 'no'}</dd>
        <dt>can check and time</dt><dd>{env.canRun ? 'yes' : 'no'}</dd>
      </dl>
      <h3>Host</h3>
      <dl className="facts">
        <dt>CPU</dt><dd>{env.host.cpu} ({env.host.cores} cores)</dd>
        <dt>memory</dt><dd>{(env.host.memTotalBytes / 2 ** 30).toFixed(0)} GiB</dd>
        <dt>OS</dt><dd>{env.host.os}</dd>
      </dl>
      <h3>What works here</h3>
      <ul className="messages">{env.messages.map((m, i) => <li key={i}>{m}</li>)}</ul>
    </div>
  );
}
