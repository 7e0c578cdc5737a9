// Resizable split panes that remember their sizes (react-resizable-panels, saved in localStorage
// per split): the workbench's panes share the window at any size instead of fixed heights.
import { Children, type ReactNode } from 'react';
import { Group, Panel, Separator, useDefaultLayout } from 'react-resizable-panels';

export interface PaneSpec {
  id: string;
  /** Percent of the split. */
  size: number;
  /** Pixels. */
  min?: number;
}

export function Split(props: { id: string; dir: 'horizontal' | 'vertical'; panes: PaneSpec[]; children: ReactNode; className?: string }) {
  const { defaultLayout, onLayoutChanged } = useDefaultLayout({ id: `kd-split-${props.id}`, storage: localStorage });
  const kids = Children.toArray(props.children);
  return (
    <Group id={props.id} orientation={props.dir} defaultLayout={defaultLayout} onLayoutChanged={onLayoutChanged} className={`split ${props.dir} ${props.className ?? ''}`} data-testid={`split-${props.id}`}>
      {props.panes.map((p, i) => [
        i > 0 ? <Separator key={`${p.id}-sep`} className={`split-handle ${props.dir}`} data-testid={`split-handle-${props.id}-${i}`} /> : null,
        <Panel key={p.id} id={p.id} defaultSize={String(p.size)} minSize={p.min ?? 80} className="pane" data-testid={`pane-${p.id}`}>
          {kids[i]}
        </Panel>,
      ])}
    </Group>
  );
}
