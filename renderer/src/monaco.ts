// Monaco, bundled with the app (no CDN: the CSP allows scripts from the app only). Only the pieces
// the workbench uses: the editor API, C/C++ and YAML highlighting, a `cuda` language (C++ plus
// CUDA's keywords) and the editor worker (diff computation).
import * as monaco from 'monaco-editor/editor/editor.api';
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

loader.config({ monaco });

export { monaco };
