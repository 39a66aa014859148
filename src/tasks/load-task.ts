// A task by name or by module: `--task aggregation` is a built-in task; `--task ./my-task.js` (any
// argument with a path separator or a .js/.mjs ending) imports that module and takes its `default`
// or `task` export, checked field by field so a malformed plugin is refused with the file and what
// was expected (docs/tasks.md walks through writing one).
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { ConfigError } from '../errors.js';
import type { Task } from './task.js';

/** Whether `reference` names a module file rather than a built-in task. */
export function isTaskModulePath(reference: string): boolean {
  return reference.includes('/') || reference.includes(path.sep) || /\.(m?js|cjs)$/.test(reference);
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

type Fail = (field: string, expected: string, got: unknown) => never;

/** Checks Task.metrics: names unique and camelCase, a label, a range, a measure function. */
function checkMetrics(metrics: unknown, fail: Fail): void {
  if (!Array.isArray(metrics)) fail('metrics', 'an array of TaskMetric {name, label, range, measure}', metrics);
  const names = new Set<string>();
  (metrics as unknown[]).forEach((value, index) => {
    const at = `metrics[${index}]`;
    if (!isRecord(value)) fail(at, 'a TaskMetric {name, label, range, measure}', value);
    const metric = value as Record<string, unknown>;
    if (typeof metric.name !== 'string' || !/^[a-z][A-Za-z0-9]*$/.test(metric.name)) fail(`${at}.name`, 'a camelCase name of letters and digits', metric.name);
    if (names.has(metric.name as string)) fail(`${at}.name`, 'a name no earlier metric of the task has', metric.name);
    names.add(metric.name as string);
    if (typeof metric.label !== 'string' || metric.label === '') fail(`${at}.label`, 'a non-empty string', metric.label);
    if (metric.range !== 'fraction' && metric.range !== 'nonNegative') fail(`${at}.range`, "'fraction' or 'nonNegative'", metric.range);
    if (metric.percent !== undefined && metric.percent !== false && !(metric.percent === true && metric.range === 'fraction')) {
      fail(`${at}.percent`, "true (only for range 'fraction'), false or absent", metric.percent);
    }
    if (metric.messagingOnly !== undefined && typeof metric.messagingOnly !== 'boolean') fail(`${at}.messagingOnly`, 'a boolean or absent', metric.messagingOnly);
    if (typeof metric.measure !== 'function') fail(`${at}.measure`, 'a function (episode, problem) => number | null', metric.measure);
  });
}

/** Checks that `value` has every field a Task needs; throws ConfigError naming `origin` and the field. */
export function checkTask(value: unknown, origin: string, builtinNames: readonly string[]): Task {
  const fail: Fail = (field, expected, got) => {
    const shown = typeof got === 'function' ? 'a function' : JSON.stringify(got) ?? String(got);
    throw new ConfigError(`${origin}: ${field} must be ${expected}, got ${shown}.`);
  };
  if (!isRecord(value)) fail('the exported task', 'an object implementing Task (src/tasks/task.ts)', value);
  const task = value as Record<string, unknown>;
  if (typeof task.name !== 'string' || !/^[a-z0-9][a-z0-9-]*$/.test(task.name)) fail('name', 'a lowercase name of letters, digits and dashes', task.name);
  if (builtinNames.includes(task.name as string)) fail('name', `a name no built-in task has (${builtinNames.join(', ')})`, task.name);
  if (typeof task.title !== 'string' || task.title === '') fail('title', 'a non-empty string', task.title);
  if (!isRecord(task.defaults)) fail('defaults', 'an object {workAllowance, finalAllowance, contextLimit, evaluationTemperature}', task.defaults);
  const defaults = task.defaults as Record<string, unknown>;
  for (const field of ['workAllowance', 'finalAllowance', 'contextLimit'] as const) {
    const v = defaults[field];
    if (typeof v !== 'number' || !Number.isSafeInteger(v) || v < 1) fail(`defaults.${field}`, 'an integer ≥ 1', v);
  }
  const temperature = defaults.evaluationTemperature;
  if (typeof temperature !== 'number' || !Number.isFinite(temperature) || temperature < 0) fail('defaults.evaluationTemperature', 'a finite number ≥ 0', temperature);
  for (const method of ['loadProblems', 'createEpisode'] as const) {
    if (typeof task[method] !== 'function') fail(method, 'a function', task[method]);
  }
  if (task.family !== undefined && task.family !== 'aggregation' && task.family !== 'exploration') fail('family', "'aggregation' or 'exploration' (the paper's metrics to compute), or absent", task.family);
  if (task.metrics !== undefined) checkMetrics(task.metrics, fail);
  if (task.demonstrator !== undefined) {
    if (!isRecord(task.demonstrator)) fail('demonstrator', 'an object {script, description}', task.demonstrator);
    const demonstrator = task.demonstrator as Record<string, unknown>;
    const script = demonstrator.script;
    if (!isRecord(script) || typeof script.name !== 'string' || typeof script.start !== 'function') fail('demonstrator.script', 'a Script {name, start(options)} (src/policy/scripted/scripted-policy.ts)', script);
    if (typeof demonstrator.description !== 'string') fail('demonstrator.description', 'a string', demonstrator.description);
  }
  return value as unknown as Task;
}

/** Imports the task module at `file` (relative to the working directory) and checks its export. */
export async function importTaskModule(file: string, builtinNames: readonly string[]): Promise<Task> {
  const absolute = path.resolve(file);
  let module: Record<string, unknown>;
  try {
    module = (await import(pathToFileURL(absolute).href)) as Record<string, unknown>;
  } catch (error) {
    throw new ConfigError(`--task ${file}: cannot import ${absolute}: ${(error as Error).message}`);
  }
  const exported = module.default ?? module.task;
  if (exported === undefined) throw new ConfigError(`--task ${file}: ${absolute} exports no task; export it as \`default\` or as \`task\`.`);
  return checkTask(exported, `--task ${file} (${absolute})`, builtinNames);
}
