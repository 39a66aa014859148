// A user's task as a module (examples/tasks/meeting-hour.mjs, docs/tasks.md's worked example), loaded
// the way `--task ./file.mjs` loads it: registered under its name, its scripted planners solving every
// team with messaging and not without it, through runEpisode, `swarm run`, `swarm eval` and a short
// `swarm train`; its own metrics (Task.metrics) in episodes, summaries, compare and the report;
// malformed modules and out-of-range metric values refused with the file and the field.
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { describe, expect, it } from 'vitest';
import { ConfigError } from '../../src/errors.js';
import { runEpisode } from '../../src/harness/index.js';
import { loadBuiltinTokenizer } from '../../src/model/s3-mini-tokenizer.js';
import { packageRoot } from '../../src/native/addon.js';
import { ScriptedPolicy } from '../../src/policy/index.js';
import { getTask, loadTask, type Task } from '../../src/tasks/index.js';

const swarm = path.join(packageRoot, 'bin', 'swarm.js');
const example = path.join(packageRoot, 'examples', 'tasks', 'meeting-hour.mjs');
const tmp = (): string => fs.mkdtempSync(path.join(os.tmpdir(), 's3-task-module-'));
const cli = (args: string[], cwd = packageRoot) => spawnSync(process.execPath, [swarm, ...args], { encoding: 'utf8', cwd });

async function successRate(task: Task, n: number, communication: boolean): Promise<number> {
  const policy = new ScriptedPolicy({ tokenizer: loadBuiltinTokenizer(), script: task.demonstrator!.script });
  const problems = (await task.loadProblems({ split: 'eval' })).slice(0, 8);
  const results = await Promise.all(problems.map((problem) => runEpisode({ task, problem, n, policy, seed: `t/${problem.id}/${n}`, communication })));
  return results.filter((r) => r.teamSuccess).length / results.length;
}

describe('a task module', () => {
  it('loads by path, registers under its name and loads once', async () => {
    const task = await loadTask(path.relative(process.cwd(), example)); // as --task examples/tasks/meeting-hour.mjs gives it
    expect(task.name).toBe('meeting-hour');
    expect(getTask('meeting-hour')).toBe(task);
    expect(await loadTask(example)).toBe(task);
    expect(task.defaults.workAllowance).toBe(1024);
  });

  it('is solved by its scripted planners with messaging at every team size, and not without it', async () => {
    const task = await loadTask(example);
    for (const n of [1, 2, 4, 8]) expect(await successRate(task, n, true), `N = ${n}`).toBe(1);
    expect(await successRate(task, 4, false)).toBeLessThan(0.75);
  });

  it('refuses malformed modules, naming the file and the field', async () => {
    const dir = tmp();
    const write = (name: string, body: string): string => {
      const file = path.join(dir, name);
      fs.writeFileSync(file, body);
      return file;
    };
    await expect(loadTask(write('none.mjs', 'export const x = 1;\n'))).rejects.toThrow(/none\.mjs exports no task; export it as `default` or as `task`/);
    await expect(loadTask(write('nodefaults.mjs', "export default { name: 'x-task', title: 'X', loadProblems() {}, createEpisode() {} };\n"))).rejects.toThrow(
      /nodefaults\.mjs.*: defaults must be an object \{workAllowance, finalAllowance, contextLimit, evaluationTemperature\}, got undefined/,
    );
    await expect(loadTask(write('builtin.mjs', "export default { name: 'aggregation', title: 'A', defaults: { workAllowance: 1, finalAllowance: 1, contextLimit: 9, evaluationTemperature: 1 }, loadProblems() {}, createEpisode() {} };\n"))).rejects.toThrow(
      /name must be a name no built-in task has/,
    );
    await expect(loadTask(write('badtemp.mjs', "export const task = { name: 'y-task', title: 'Y', defaults: { workAllowance: 8, finalAllowance: 1, contextLimit: 64, evaluationTemperature: -1 }, loadProblems() {}, createEpisode() {} };\n"))).rejects.toThrow(
      /defaults\.evaluationTemperature must be a finite number ≥ 0, got -1/,
    );
    await expect(loadTask(write('badfamily.mjs', "export default { name: 'z-task', title: 'Z', family: 'sorting', defaults: { workAllowance: 8, finalAllowance: 1, contextLimit: 64, evaluationTemperature: 1 }, loadProblems() {}, createEpisode() {} };\n"))).rejects.toThrow(
      /family must be 'aggregation' or 'exploration'/,
    );
    const minimal = "name: 'm-task', title: 'M', defaults: { workAllowance: 8, finalAllowance: 1, contextLimit: 64, evaluationTemperature: 1 }, loadProblems() {}, createEpisode() {}";
    await expect(loadTask(write('badmetric.mjs', `export default { ${minimal}, metrics: [{ name: 'Bad-Name', label: 'B', range: 'fraction', measure() {} }] };\n`))).rejects.toThrow(
      /metrics\[0\]\.name must be a camelCase name of letters and digits, got "Bad-Name"/,
    );
    await expect(loadTask(write('twometrics.mjs', `export default { ${minimal}, metrics: [{ name: 'a', label: 'A', range: 'fraction', measure() {} }, { name: 'a', label: 'A', range: 'fraction', measure() {} }] };\n`))).rejects.toThrow(
      /metrics\[1\]\.name must be a name no earlier metric of the task has/,
    );
    await expect(loadTask(write('percent.mjs', `export default { ${minimal}, metrics: [{ name: 'count', label: 'C', range: 'nonNegative', percent: true, measure() {} }] };\n`))).rejects.toThrow(
      /metrics\[0\]\.percent must be true \(only for range 'fraction'\), false or absent, got true/,
    );
    await expect(loadTask(path.join(dir, 'missing.mjs'))).rejects.toThrow(ConfigError);
    await expect(loadTask('no-such-task')).rejects.toThrow(/Unknown task "no-such-task"; expected one of: aggregation, .* or a task module's path/);
  });
});

describe('a task module on the command line', () => {
  it('runs one episode with swarm run and evaluates with swarm eval --policy scripted', () => {
    const run = cli(['run', '--task', './examples/tasks/meeting-hour.mjs', '--n', '3']);
    expect(run.stderr).toBe('');
    expect(run.status).toBe(0);
    const out = tmp();
    const evaluation = cli(['eval', '--policy', 'scripted', '--task', './examples/tasks/meeting-hour.mjs', '--sizes', '1,3', '--seeds', '2', '--problems', '4', '--out', out]);
    expect(evaluation.stderr).toBe('');
    expect(evaluation.status).toBe(0);
    const summary = JSON.parse(fs.readFileSync(path.join(out, 'summary.json'), 'utf8'));
    expect(summary.task).toBe('meeting-hour');
    expect(summary.sizes['3'].success.mean).toBe(1);
    expect(summary.policy.description).toMatch(/scripted planners/);
    // No paper family: the task-independent metrics and the task's own only.
    expect(summary.sizes['3']).toHaveProperty('reciprocity');
    expect(summary.sizes['3']).not.toHaveProperty('structures');
    expect(summary.sizes['3']).not.toHaveProperty('roomOverlap');
    expect(Object.keys(summary.taskMetrics)).toEqual(['agentAccuracy', 'calendarsSharedShare', 'heardEveryoneShare']);
    expect(summary.taskMetrics.agentAccuracy).toEqual({ label: 'Agents naming the hour', range: 'fraction', percent: true });
    // The planners share their calendars, read every teammate and all answer correctly with messaging.
    for (const name of ['agentAccuracy', 'calendarsSharedShare', 'heardEveryoneShare']) expect(summary.sizes['3'].taskMetrics[name].perSeed, name).toEqual([1, 1]);
    // Alone, sharing and hearing are undefined.
    expect(summary.sizes['1'].taskMetrics.calendarsSharedShare.perSeed).toEqual([null, null]);
    expect(evaluation.stdout).toMatch(/Agents naming the hour %.*Calendars shared.*Heard every teammate/);
    const episode = JSON.parse(fs.readFileSync(path.join(out, 'episodes.jsonl'), 'utf8').split('\n')[0]);
    expect(Object.keys(episode.taskMetrics)).toEqual(['agentAccuracy', 'calendarsSharedShare', 'heardEveryoneShare']);

    // Without messaging: fewer agents name the hour, the messaging-only metrics are left out; compare tests the task's metric too.
    const noComm = tmp();
    expect(cli(['eval', '--policy', 'scripted', '--task', './examples/tasks/meeting-hour.mjs', '--sizes', '1,3', '--seeds', '2', '--problems', '4', '--no-comm', '--out', noComm]).status).toBe(0);
    const silent = JSON.parse(fs.readFileSync(path.join(noComm, 'summary.json'), 'utf8'));
    expect(Object.keys(silent.sizes['3'].taskMetrics)).toEqual(['agentAccuracy']);
    expect(silent.sizes['3'].taskMetrics.agentAccuracy.mean).toBeLessThan(0.75);
    const compare = cli(['compare', out, noComm, '--json']);
    expect(compare.status).toBe(0);
    const contrasts = JSON.parse(compare.stdout).comparisons.filter((c: { metric: string; n: number }) => c.metric === 'task.agentAccuracy' && c.n === 3);
    expect(contrasts).toHaveLength(1);
    expect(contrasts[0].meanDiff).toBeGreaterThan(0.25);
    expect(cli(['compare', out, noComm]).stdout).toMatch(/Agents naming the hour \(pp\)/);

    // The report plots the task's own metrics.
    const report = cli(['report', out]);
    expect(report.status).toBe(0);
    const html = fs.readFileSync(path.join(out, 'report.html'), 'utf8');
    expect(html).toContain('data-plot="meeting-hour-task-agentAccuracy"');
    expect(html).toContain('data-plot="meeting-hour-task-heardEveryoneShare"');
  });

  it("refuses a task metric's value outside its range, naming the task, the metric and the problem", () => {
    const dir = tmp();
    const file = path.join(dir, 'wide.mjs');
    fs.writeFileSync(
      file,
      `import base from ${JSON.stringify(pathToFileURL(example).href)};\n` +
        "export default { ...base, name: 'wide-hour', metrics: [{ name: 'double', label: 'Twice', range: 'fraction', measure: () => 2 }] };\n",
    );
    const result = cli(['eval', '--policy', 'scripted', '--task', file, '--sizes', '2', '--seeds', '1', '--problems', '1', '--out', path.join(dir, 'ev')]);
    expect(result.status).not.toBe(0);
    expect(result.stderr).toMatch(/task "wide-hour" metric "double" on problem meeting-hour\/eval\/0000 returned 2; expected a number in \[0, 1\] or null/);
  });

  it('trains with swarm train --set task=FILE: SFT on its demonstrations, then RL, recording the absolute path', () => {
    const runDir = path.join(tmp(), 'run');
    const sets = [
      'task=./examples/tasks/meeting-hour.mjs', 'sft.excerptUpdates=1', 'sft.updates=1', 'sft.demonstrations=4', 'sft.demonstrationTeamSizes=2',
      'sft.maxSequenceTokens=2048', 'sft.packedSequences=1', 'rlUpdates=1', 'problemsPerUpdate=1', 'attemptsPerProblem=2', 'teamSize=2',
      'workAllowance=160', 'finalAllowance=16', 'generationPieceTokens=32', 'contextLength=1024',
    ].flatMap((s) => ['--set', s]);
    const result = cli(['train', '--out', runDir, '--no-eval', ...sets]);
    expect(result.stderr).toBe('');
    expect(result.status).toBe(0);
    expect(result.stdout).toMatch(/update 1\/1: reward/);
    expect(JSON.parse(fs.readFileSync(path.join(runDir, 'config.json'), 'utf8')).task).toBe(example);
  }, 120_000);
});
