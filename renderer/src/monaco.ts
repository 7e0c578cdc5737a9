// Monaco, bundled with the app (no CDN: the CSP allows scripts from the app only). Only the pieces
// the workbench uses: the editor API, C/C++ and YAML highlighting, a `cuda` language (C++ plus
// CUDA's keywords) and the editor worker (diff computation).
import * as monaco from 'monaco-editor/editor/editor.api';
// The editor's own features, as in VS Code: F1 command palette, F8 next problem, Ctrl+G go to line,
// find, hovers on markers, folding… (editor.api alone has none of them).
import 'monaco-editor/features/register.all';
import 'monaco-editor/languages/definitions/cpp/register';
import 'monaco-editor/languages/definitions/yaml/register';
import { conf as cppConf, language as cppLanguage } from 'monaco-editor/languages/definitions/cpp/cpp';
import EditorWorker from 'monaco-editor/editor/editor.worker?worker';
import { loader } from '@monaco-editor/react';

const CUDA_KEYWORDS = [
  '__global__', '__device__', '__host__', '__shared__', '__constant__', '__restrict__', '__managed__', '__forceinline__', '__noinline__', '__launch_bounds__',
  '__syncthreads', '__syncwarp', '__shfl_sync', '__shfl_down_sync', '__shfl_xor_sync', '__ldg', 'threadIdx', 'blockIdx', 'blockDim', 'gridDim', 'warpSize',
];

(self as unknown as { MonacoEnvironment: { getWorker: () => Worker } }).MonacoEnvironment = { getWorker: () => new EditorWorker() };

monaco.languages.register({ id: 'cuda', extensions: ['.cu', '.cuh'], aliases: ['CUDA', 'cuda'] });
monaco.languages.setLanguageConfiguration('cuda', cppConf);
monaco.languages.setMonarchTokensProvider('cuda', { ...cppLanguage, keywords: [...(cppLanguage.keywords as string[]), ...CUDA_KEYWORDS] } as monaco.languages.IMonarchLanguage);

// PTX and SASS, enough to read them: comments, directives, registers, predicates, numbers.
const ASM: monaco.languages.IMonarchLanguage = {
  tokenizer: {
    root: [
      [/\/\/.*$/, 'comment'],
      [/\/\*/, 'comment', '@comment'],
      [/^\s*\.[a-z_]+/, 'keyword'],
      [/\.[a-z0-9_]+/, 'type'],
      [/%[a-z_][\w.]*|\bU?R[0-9]+\b|\bU?P[0-9T]\b|\bRZ\b/, 'variable'],
      [/@!?%?\w+/, 'keyword'],
      [/0x[0-9a-fA-F]+|\b\d+(\.\d+)?\b/, 'number'],
      [/^\s*[A-Z][A-Z0-9_.]+|\b[a-z]+(?=\.)/, 'keyword'],
    ],
    comment: [
      [/\*\//, 'comment', '@pop'],
      [/./, 'comment'],
    ],
  },
};
for (const id of ['ptx', 'sass']) {
  monaco.languages.register({ id });
  monaco.languages.setMonarchTokensProvider(id, ASM);
}

loader.config({ monaco });

export { monaco };
