// The path a user of the prebuilt package takes: build the prebuild, pack the package, install the
// tarball into an empty folder with cmake, make, nvcc and every compiler hidden from PATH, and run
// `swarm doctor` and a scripted `swarm run` there, then a script that imports the library (`import
// ... from 's3-swarm'`, src/index.ts) and runs an episode of the example task module. It must load
// the prebuilt addon without building anything.
import { describe, expect, it } from 'vitest';
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { packageRoot } from '../../src/native/addon.js';

const hiddenTools = /^(cmake|ctest|cpack|make|gmake|gcc.*|g\+\+.*|cc|c\+\+|cpp.*|clang.*|ld(\..*)?|nvcc|x86_64-linux-gnu-.*|node-gyp)$/;

/** A folder of symlinks to everything in /usr/bin and /bin except build tools. */
function pathWithoutBuildTools(dir: string): string {
  fs.mkdirSync(dir);
  for (const source of ['/usr/bin', '/bin']) {
    for (const name of fs.readdirSync(source)) {
      const target = path.join(dir, name);
      if (hiddenTools.test(name) || fs.existsSync(target)) continue;
      fs.symlinkSync(path.join(source, name), target);
    }
  }
  return dir;
}

describe('the prebuilt package', () => {
  it('installs from its tarball without compilers and runs swarm doctor, a scripted swarm run and a library script on the prebuild', () => {
    const work = fs.mkdtempSync(path.join(os.tmpdir(), 's3-pack-'));
    const prebuildDir = path.join(packageRoot, 'prebuilds', 'linux-x64');
    try {
      execFileSync(process.execPath, [path.join(packageRoot, 'scripts/build-prebuilds.mjs')], { cwd: packageRoot, stdio: 'pipe' });
      const packed = JSON.parse(
        execFileSync('npm', ['pack', '--json', '--pack-destination', work], { cwd: packageRoot, stdio: ['ignore', 'pipe', 'pipe'] }).toString(),
      ) as { filename: string; files: { path: string }[] }[];
      const files = packed[0].files.map((f) => f.path);
      expect(files).toContain('prebuilds/linux-x64/s3-swarm.node');
      expect(files).toContain('dist/cli/main.js');
      expect(files.some((f) => f.startsWith('build/'))).toBe(false);

      const consumer = path.join(work, 'consumer');
      fs.mkdirSync(consumer);
      fs.writeFileSync(path.join(consumer, 'package.json'), JSON.stringify({ name: 'consumer', private: true }));
      const env = { ...process.env, PATH: pathWithoutBuildTools(path.join(work, 'bin')), npm_config_node_gyp: '' };
      for (const tool of ['cmake', 'g++', 'nvcc', 'make']) {
        expect(() => execFileSync('sh', ['-c', `command -v ${tool}`], { env, stdio: 'pipe' })).toThrow();
      }
      const installLog = execFileSync('npm', ['install', '--no-audit', '--no-fund', '--foreground-scripts', path.join(work, packed[0].filename)], {
        cwd: consumer,
        env,
        stdio: ['ignore', 'pipe', 'pipe'],
      }).toString();
      expect(installLog).toMatch(/using the prebuilt addon/);

      const doctor = JSON.parse(
        execFileSync('npx', ['--no-install', 'swarm', 'doctor', '--json'], { cwd: consumer, env, stdio: ['ignore', 'pipe', 'pipe'] }).toString(),
      );
      expect(doctor.addon.origin).toBe('prebuild');
      expect(doctor.addon.path).toContain(path.join('node_modules', 's3-swarm', 'prebuilds', 'linux-x64'));
      expect(doctor.addon.buildSystem).toBe('cmake-js');
      expect(['cpu', 'cuda']).toContain(doctor.backend);
      expect(doctor.backend === 'cuda').toBe(doctor.cuda.deviceCount > 0);

      const run = execFileSync('npx', ['--no-install', 'swarm', 'run', '--task', 'aggregation', '--n', '3', '--policy', 'scripted'], { cwd: consumer, env, stdio: ['ignore', 'pipe', 'pipe'] }).toString();
      expect(run).toMatch(/success/i);

      // The library as a user imports it, with a task module of their own (docs/api.md, docs/tasks.md).
      fs.copyFileSync(path.join(packageRoot, 'examples', 'tasks', 'meeting-hour.mjs'), path.join(consumer, 'meeting-hour.mjs'));
      fs.writeFileSync(
        path.join(consumer, 'script.mjs'),
        [
          "import { loadTask, runEpisode, ScriptedPolicy, loadBuiltinTokenizer, packageVersion, TASK_NAMES } from 's3-swarm';",
          "const task = await loadTask('./meeting-hour.mjs');",
          "const [problem] = await task.loadProblems({ split: 'eval' });",
          'const policy = new ScriptedPolicy({ tokenizer: loadBuiltinTokenizer(), script: task.demonstrator.script });',
          "const result = await runEpisode({ task, problem, n: 4, policy, seed: 'consumer' });",
          'console.log(JSON.stringify({ version: packageVersion, tasks: TASK_NAMES, name: task.name, success: result.teamSuccess }));',
        ].join('\n'),
      );
      const script = JSON.parse(execFileSync(process.execPath, ['script.mjs'], { cwd: consumer, env, stdio: ['ignore', 'pipe', 'pipe'] }).toString());
      expect(script).toEqual({ version: JSON.parse(fs.readFileSync(path.join(packageRoot, 'package.json'), 'utf8')).version, tasks: ['aggregation', 'aggregation-digits', 'exploration', 'exploration-d2'], name: 'meeting-hour', success: true });
    } finally {
      fs.rmSync(prebuildDir, { recursive: true, force: true });
      fs.rmSync(work, { recursive: true, force: true });
    }
  }, 900_000);
});
