// An empty state that offers the next action (start a run, open a recorded space, pick B…), not
// just a sentence.
import type { ReactNode } from 'react';

export interface EmptyAction {
  label: string;
  run: () => void;
}

export function EmptyState(props: { title: string; children?: ReactNode; actions?: EmptyAction[]; testid?: string }) {
  return (
    <div className="empty-state" data-testid={props.testid ?? 'empty-state'}>
      <h3>{props.title}</h3>
      {props.children && <p>{props.children}</p>}
      {props.actions?.length ? (
        <div className="row">
          {props.actions.map((a, i) => (
            <button key={a.label} className={i === 0 ? 'primary' : ''} data-testid="empty-action" onClick={a.run}>{a.label}</button>
          ))}
        </div>
      ) : null}
    </div>
  );
}
