// The manifest form above task.yaml's text: name, description, entry, each tunable's values and the
// restrictions. Its drafts are the open task's (they are re-read whenever the task or its text
// changes, so switching tasks never carries one task's values into another), and a field is
// written back only when its value changed, through setManifestValue (yaml's Document API: only
// the edited value's text changes; comments and formatting survive).
import { useEffect, useMemo, useState } from 'react';
import YAML from 'yaml';
import type { ManifestIssueDTO } from '../../../main/contract/api.js';
import { setManifestValue } from '../manifest-edit.js';

const FORM_FIELDS = ['name', 'description', 'entry'] as const;

export function fieldIssues(issues: ManifestIssueDTO[], field: string): ManifestIssueDTO[] {
  return issues.filter((i) => i.field === field || i.field.startsWith(field + '.') || i.field.startsWith(field + '['));
}

interface Parsed {
  fields: Record<string, string>;
  tunables: Record<string, string>;
  restrictions: string;
}

function parse(text: string): Parsed | null {
  try {
    const doc = YAML.parseDocument(text);
    if (doc.errors.length) return null;
    const js = (doc.toJS() ?? {}) as { tunables?: Record<string, unknown[]>; restrictions?: unknown[] } & Record<string, unknown>;
    return {
      fields: Object.fromEntries(FORM_FIELDS.map((f) => [f, js[f] === undefined || js[f] === null ? '' : String(js[f])])),
      tunables: Object.fromEntries(Object.entries(js.tunables ?? {}).map(([k, v]) => [k, Array.isArray(v) ? v.join(', ') : String(v)])),
      restrictions: (js.restrictions ?? []).map(String).join('\n'),
    };
  } catch {
    return null;
  }
}

/** Lines of `now` that differ from `saved` (1-based), with their text; null when the line counts differ. */
export function changedLines(saved: string, now: string): Array<{ line: number; text: string }> | null {
  const a = saved.split('\n');
  const b = now.split('\n');
  if (a.length !== b.length) return null;
  return b.flatMap((l, i) => (l !== a[i] ? [{ line: i + 1, text: l }] : []));
}

export function ManifestForm(props: { taskId: string; text: string; saved: string; issues: ManifestIssueDTO[]; readOnly: boolean; onChange: (text: string) => void }) {
  const parsed = useMemo(() => parse(props.text), [props.text]);
  // Drafts of the list fields (edited as text, written on blur); reset for every task and text.
  const [drafts, setDrafts] = useState<{ task: string; tunables: Record<string, string>; restrictions: string } | null>(null);
  useEffect(() => {
    if (parsed) setDrafts({ task: props.taskId, tunables: parsed.tunables, restrictions: parsed.restrictions });
  }, [props.taskId, parsed]);
  const write = (path: Array<string>, value: unknown): void => {
    try {
      props.onChange(setManifestValue(props.text, path, value));
    } catch {
      /* the text does not parse: the form shows why */
    }
  };
  const Issue = ({ field }: { field: string }) => (
    <>
      {fieldIssues(props.issues, field).map((i, n) => (
        <div key={n} className="field-error" data-testid={`field-error-${field}`}>
          {i.field}: {i.message}{i.line ? ` (line ${i.line})` : ''}
        </div>
      ))}
    </>
  );
  if (!parsed) return <p className="field-error">The manifest is not valid YAML: fix it in the text editor below.</p>;
  const d = drafts && drafts.task === props.taskId ? drafts : { task: props.taskId, tunables: parsed.tunables, restrictions: parsed.restrictions };
  return (
    <form className="manifest-form" onSubmit={(e) => e.preventDefault()} data-testid="manifest-form" data-task={props.taskId}>
      {FORM_FIELDS.map((f) => (
        <label key={f} className={f === 'description' ? 'wide' : ''}>
          <span>{f}</span>
          <input data-testid={`manifest-${f}`} value={parsed.fields[f]} readOnly={props.readOnly} onChange={(e) => write([f], e.target.value)} className={fieldIssues(props.issues, f).length ? 'invalid' : ''} />
          <Issue field={f} />
        </label>
      ))}
      <fieldset>
        <legend>tunables (values comma-separated)</legend>
        {Object.keys(parsed.tunables).map((k) => (
          <label key={`${props.taskId}:${k}`}>
            <span className="mono">{k}</span>
            <input
              data-testid={`tunable-${k}`}
              value={d.tunables[k] ?? ''}
              readOnly={props.readOnly}
              onChange={(e) => setDrafts({ ...d, tunables: { ...d.tunables, [k]: e.target.value } })}
              onBlur={(e) => {
                if (e.target.value === parsed.tunables[k]) return; // unchanged: nothing is written
                const values = e.target.value.split(',').map((x) => x.trim()).filter(Boolean).map((x) => (Number.isFinite(Number(x)) ? Number(x) : x));
                write(['tunables', k], values);
              }}
            />
            <Issue field={`tunables.${k}`} />
          </label>
        ))}
      </fieldset>
      <label className="wide">
        <span>restrictions (one per line)</span>
        <textarea
          data-testid="manifest-restrictions"
          rows={3}
          value={d.restrictions}
          readOnly={props.readOnly}
          onChange={(e) => setDrafts({ ...d, restrictions: e.target.value })}
          onBlur={(e) => {
            if (e.target.value === parsed.restrictions) return;
            write(['restrictions'], e.target.value.split('\n').map((x) => x.trim()).filter(Boolean));
          }}
        />
        <Issue field="restrictions" />
      </label>
      {['args', 'sizes', 'timed', 'defaults', 'metrics', 'tolerance'].map((f) => (
        <Issue key={f} field={f} />
      ))}
      <div className="wide muted small" data-testid="manifest-changes">
        {(() => {
          const c = changedLines(props.saved, props.text);
          if (c === null) return 'unsaved changes (lines added or removed)';
          if (!c.length) return 'no unsaved changes';
          return `unsaved: ${c.length === 1 ? 'line' : 'lines'} ${c.map((x) => `${x.line}: ${x.text.trim()}`).join(' · ')}`;
        })()}
      </div>
    </form>
  );
}
