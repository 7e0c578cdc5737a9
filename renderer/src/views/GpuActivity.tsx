// A pool run's GPUs as they work (`optimize --gpus`, or SIMULATED GPUs of a REPLAY): each GPU's
// state (measuring / idle / removed from the pool, with why), the variant it measures, its results,
// evaluations per minute and busy share. Fed by the run's state (RunState.gpus); holds no state.
// The text comes from ../gpu-activity.ts.
import type { GpuActivity } from '../../../main/contract/api.js';
import { gpuActivityCaption, gpuActivityRows } from '../gpu-activity.js';

const COLOR: Record<GpuActivity['state'], string> = { busy: '#047857', idle: '#64748b', removed: '#b91c1c' };

export function GpuActivityPanel({ gpus }: { gpus: GpuActivity[] }) {
  if (!gpus.length) return null;
  return (
    <div className="gpu-activity" data-testid="gpu-activity" style={{ margin: '6px 0' }}>
      <div className="muted small">{gpuActivityCaption(gpus)}</div>
      <table className="grid">
        <thead>
          <tr><th>GPU</th><th>state</th><th>variant</th><th>results</th><th>evals/min</th><th>busy</th></tr>
        </thead>
        <tbody>
          {gpuActivityRows(gpus).map((r) => (
            <tr key={r.id} data-testid={`gpu-activity-${r.id}`} title={r.uuid}>
              <td>{r.gpu}</td>
              <td style={{ color: COLOR[r.state], fontWeight: 600 }}>{r.stateText}</td>
              <td className="mono">{r.variant}</td>
              <td>{r.results}</td>
              <td>{r.rate}</td>
              <td>
                <span style={{ display: 'inline-block', width: 60, height: 8, background: '#e2e8f0', marginRight: 6, verticalAlign: 'middle' }}>
                  <span style={{ display: 'block', height: 8, width: `${r.busyPercent ?? 0}%`, background: COLOR[r.state] }} />
                </span>
                {r.busyPercent === null ? '–' : `${r.busyPercent}%`}
              </td>
            </tr>
          ))}
        </tbody>
      </table>
    </div>
  );
}
