// A PyTorch-reference task through the API the workbench uses (the core's handlers, no transport):
// tasks.get says it is one and returns its Python reference (model.py, not reference.cu);
// tasks.saveFile refuses to write that trusted reference and still writes the kernel.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ApiService } from '../main/core/service.js';
import { PY_PROBLEM, writePythonTask } from './fixtures/python-task.js';

let home = '';
let taskDir = '';
let service: ApiService;

beforeAll(() => {
  home = fs.mkdtempSync(path.join(os.tmpdir(), 'kd-api-pytask-'));
  taskDir = writePythonTask(home);
  service = new ApiService({ mode: 'browser', env: { ...process.env, KERNELDUEL_HOME: home } });
});
afterAll(async () => {
  await service.stopAll();
  fs.rmSync(home, { recursive: true, force: true });
});

describe('a PyTorch-reference task in the API', () => {
  it('tasks.get: pytorch, the reference is model.py\'s Python source; a CUDA task is not pytorch', async () => {
    const h = service.handlers();
    const { id } = await h['tasks.open']({ dir: taskDir });
    const t = await h['tasks.get']({ taskId: id });
    expect(t.pytorch).toBe(true);
    expect(t.files.reference).toBe('model.py');
    expect(t.reference).toBe(PY_PROBLEM);
    expect((await h['tasks.get']({ taskId: 'softmax' })).pytorch).toBe(false);
  });

  it('tasks.saveFile refuses the trusted reference, and writes the kernel', async () => {
    const h = service.handlers();
    const { id } = await h['tasks.open']({ dir: taskDir });
    await expect(Promise.resolve().then(() => h['tasks.saveFile']({ taskId: id, file: 'reference', text: 'class Model: pass\n' }))).rejects.toThrow(/model\.py is the task's trusted PyTorch reference/);
    expect(fs.readFileSync(path.join(taskDir, 'model.py'), 'utf8')).toBe(PY_PROBLEM);
    const kernel = `${fs.readFileSync(path.join(taskDir, 'kernel.cu'), 'utf8')}// edited\n`;
    await h['tasks.saveFile']({ taskId: id, file: 'kernel', text: kernel });
    expect(fs.readFileSync(path.join(taskDir, 'kernel.cu'), 'utf8')).toBe(kernel);
  });

  it('llm.previewPrompt for the task (no session) is the Python-candidate prompt with the PyTorch reference', async () => {
    const h = service.handlers();
    const { id } = await h['tasks.open']({ dir: taskDir });
    const p = await h['llm.previewPrompt']({ taskId: id });
    const user = p.messages[1].content;
    expect(p.messages[0].content).toContain('PyTorch modules faster');
    expect(user).toContain(`\`\`\`python\n${PY_PROBLEM.trimEnd()}\n\`\`\``);
    expect(user).toContain('class ModelNew(Model):\n    pass');
    expect(user).not.toContain('```cuda');
  });
});
