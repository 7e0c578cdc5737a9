declare module '*?worker' {
  const WorkerCtor: { new (): Worker };
  export default WorkerCtor;
}
declare module 'monaco-editor/languages/definitions/cpp/cpp' {
  import type { languages } from 'monaco-editor/editor/editor.api';
  export const conf: languages.LanguageConfiguration;
  export const language: languages.IMonarchLanguage & { keywords: string[] };
}
