// Edits of task.yaml from the manifest form that change only what was edited: yaml's Document API
// finds the edited node and its place in the text, and just that span is rewritten in the node's own
// style (a flow list stays `[a, b]`, a quoted string stays quoted, a block list keeps the lines and
// comments of the items that did not change). Everything else — comments, alignment, number
// spellings like 1.0e-4, flow maps — stays byte for byte. Pure; unit-tested.
import YAML from 'yaml';

type Path = Array<string | number>;

const plain = (v: unknown): string => {
  if (typeof v === 'number') return String(v);
  const s = String(v);
  // Plain when YAML reads it back as the same string; else double-quoted.
  try {
    if (s !== '' && !/^\s|\s$|: |\s#|^[-?:,[\]{}#&*!|>'"%@`]/.test(s) && YAML.parse(s) === s) return s;
  } catch {
    /* quote it */
  }
  return JSON.stringify(s);
};

function scalarText(node: YAML.Scalar, v: unknown, indent: string): string | null {
  if (typeof v !== 'string' && typeof v !== 'number') return null;
  switch (node.type) {
    case 'QUOTE_DOUBLE':
      return JSON.stringify(String(v));
    case 'QUOTE_SINGLE':
      return `'${String(v).replace(/'/g, "''")}'`;
    case 'BLOCK_FOLDED':
    case 'BLOCK_LITERAL':
      return `${node.type === 'BLOCK_FOLDED' ? '>' : '|'}-\n${String(v).split('\n').map((l) => `${indent}  ${l}`).join('\n')}`;
    default:
      return plain(v);
  }
}

const lineStart = (text: string, i: number): number => text.lastIndexOf('\n', i - 1) + 1;

/** `text` with the value at `path` set to `value`, rewriting only that value's span where it exists. */
export function setManifestValue(text: string, path: Path, value: unknown): string {
  const doc = YAML.parseDocument(text, { keepSourceTokens: true });
  if (doc.errors.length) throw new Error(`task.yaml does not parse: ${doc.errors[0].message}`);
  const node = doc.getIn(path, true) as YAML.Node | undefined;
  if (node && node.range) {
    const [start, end] = node.range;
    const indent = text.slice(lineStart(text, start), start).replace(/\S.*$/, '');
    let rendered: string | null = null;
    if (YAML.isScalar(node)) rendered = scalarText(node, value, indent);
    else if (YAML.isSeq(node) && Array.isArray(value)) {
      if (node.flow) rendered = `[${value.map(plain).join(', ')}]`;
      else {
        // Block list: one line per item; unchanged items keep their line (and its comment).
        const from = lineStart(text, start);
        const old = new Map<string, string>();
        for (const it of node.items) {
          if (!YAML.isScalar(it) || !it.range) continue;
          const ls = lineStart(text, it.range[0]);
          const le = text.indexOf('\n', it.range[1]);
          old.set(String(it.value), text.slice(ls, le < 0 ? text.length : le));
        }
        const lastLineEnd = text.indexOf('\n', end - 1);
        const lines = value.map((x) => old.get(String(x)) ?? `${indent}- ${plain(x)}`);
        if (!lines.length) return setViaDocument(doc, path, value);
        return text.slice(0, from) + lines.join('\n') + (lastLineEnd < 0 ? '' : text.slice(end > 0 && text[end - 1] === '\n' ? end - 1 : lastLineEnd));
      }
    }
    if (rendered !== null) return text.slice(0, start) + rendered + text.slice(end);
  }
  return setViaDocument(doc, path, value);
}

/** A key that is not there yet (or a shape the span edit does not handle): set through the Document. */
function setViaDocument(doc: YAML.Document, path: Path, value: unknown): string {
  const flow = Array.isArray(value) && value.every((x) => typeof x !== 'object');
  doc.setIn(path, flow && path[0] === 'tunables' ? doc.createNode(value, { flow: true }) : value);
  return doc.toString({ lineWidth: 0, flowCollectionPadding: false });
}
