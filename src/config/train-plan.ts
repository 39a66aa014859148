// The readable plan `swarm train --dry-run` prints: every setting with its value, where it came
// from (preset, config file or flag) and the table or appendix of the paper that sets it, then the
// preset's departures from the paper.
import { NULLABLE_GROUPS, TRAIN_CONFIG_FIELDS } from './train-config-fields.js';
import { readPath } from './config-path.js';
import type { ResolvedTrainConfig } from './resolve-train-config.js';
import type { TrainConfig } from './train-config.js';
import { agentAllowance } from '../harness/episode-settings.js';

/** A number as a reader writes it: 5e-7 and 1e-5 in exponent form, 40960 in full, a real-valued 1 as 1.0. */
export function formatSettingNumber(value: number, real: boolean): string {
  if (value !== 0 && Math.abs(value) < 1e-3) return value.toExponential();
  return real && Number.isInteger(value) && value !== 0 ? value.toFixed(1) : String(value);
}

/** A setting's value as one cell of the plan; `real` marks a real-valued (not integer) field. */
export function formatSettingValue(value: unknown, real = false): string {
  if (value === null) return 'none';
  if (typeof value === 'number') return formatSettingNumber(value, real);
  if (Array.isArray(value)) return `(${value.map((v) => (typeof v === 'number' ? formatSettingNumber(v, real) : String(v))).join(', ')})`;
  return String(value);
}

/**
 * Settings this build records but does not apply, whatever the preset says: listed with the preset's
 * own deviations so the plan never claims to follow the paper where it does not.
 */
export function implementationDeviations(config: TrainConfig): string[] {
  const deviations: string[] = [];
  if (config.precision.rolloutWeights !== 'f32' || config.precision.rolloutKvCache !== 'f32') {
    deviations.push(
      `precision: rollouts sample from ${config.precision.rolloutWeights} weights with a ${config.precision.rolloutKvCache} KV cache, but the engine (CPU and CUDA alike) computes activations in f32 (App. A.1: BF16 activations)`,
    );
  }
  if (config.precision.train === 'bf16') {
    deviations.push(
      'precision.train = bf16: the linear layers\', the LM head\'s and attention\'s products (QKᵀ, PV and their gradients; forward and backward) take BF16-rounded operands with f32 sums, but the softmax, the norms, RoPE and SwiGLU compute in f32 and activations are kept in f32 (App. A.1: BF16 forward and backward)',
    );
  }
  return deviations;
}

/** Where the paper can be read two ways, the reading this config takes, with the sentence it rests on. */
export function trainPlanReadings(config: TrainConfig): string[] {
  const allowance = agentAllowance(config);
  const readings = [
    `token cost and token efficiency: L = workAllowance + finalAllowance = ${allowance} per agent, as the team's tokens Σ|τᵢ| count both ("the fraction of the team's total allowance NL", §3; "8,192 work tokens plus 1,024 for the final answer", App. A)`,
  ];
  if (config.model.thinking) {
    readings.push(
      'reasoning: every agent keeps all its reasoning in its history, in both tasks ("all reasoning retained", Table 4, exploration); Table 4 says nothing of it for aggregation, where Qwen3\'s stock template would drop the work phase\'s reasoning only at the final-answer prompt, and histories here are append-only and KV-cached (docs/chat-format.md)',
    );
  }
  readings.push(
    `precision: the sampler runs ${config.precision.rolloutWeights} weights (converted from the trainer's f32 at every weight swap) and a ${config.precision.rolloutKvCache} KV cache; ${config.precision.train === 'bf16' ? 'the trainer multiplies BF16-rounded operands with f32 sums on f32 master weights' : 'the trainer computes in f32'}; the importance ratio corrects the mismatch, reported as meanAbsLogRatio and maskFraction ("These numerical differences and the lag between collection and training cause the sampling distribution µ to" differ, App. A.1)`,
  );
  if (config.learner === 'no-comm') {
    readings.push('no-comm starts from the team SFT policy and loses the messaging tools in RL and evaluation ("The no-communication and individual-reward exploration controls start from the same fine-tuned team policy", App. A)');
  }
  if (!config.synchronousCollection) {
    readings.push(
      config.deterministicCollection
        ? 'asynchronous collection, deterministic: the next update\'s groups are collected while the trainer updates, with the weights before that update, and the new weights go in once they are all in (one update off policy, lag 1 within the maximum of 4; "inference continues collecting episodes while the trainer updates", App. A; docs/determinism.md)'
        : 'asynchronous collection, free (--nondeterministic): new weights are loaded as they become available, under pieces in flight (in-flight updates, App. A); runs depend on timing',
    );
  }
  readings.push('all G attempts at a problem share a dispatch policy version and every team member the same reward, checked per update (dispatchVersionMismatches, teamRewardMismatches in metrics.jsonl; "we check both", App. C)');
  return readings;
}

/** The dry-run plan of a resolved config, as lines of text. */
export function formatTrainPlan(resolved: ResolvedTrainConfig, options: { resume: boolean }): string {
  const { config, sources, presetName } = resolved;
  const record = config as unknown as Record<string, unknown>;
  const rows: [string, string, string, string][] = [['setting', 'value', 'source', 'reference']];
  const shownGroups = new Set<string>();
  for (const field of TRAIN_CONFIG_FIELDS) {
    if (field.path === 'deviations') continue;
    const group = field.path.split('.')[0];
    if (NULLABLE_GROUPS.includes(group) && record[group] === null) {
      if (shownGroups.has(group)) continue;
      shownGroups.add(group);
      rows.push([group, 'none', sources[group] ?? 'preset', field.reference]);
      continue;
    }
    rows.push([field.path, formatSettingValue(readPath(record, field.path), field.type.kind === 'number' || field.type.kind === 'number-pair'), sources[field.path] ?? sources[group] ?? 'preset', field.reference]);
  }
  const widths = [0, 1, 2].map((column) => Math.max(...rows.map((row) => row[column].length)));
  const lines = [
    `swarm train plan (dry run, nothing trained): preset ${presetName}, learner ${config.learner}, task ${config.task}${options.resume ? ', resuming' : ''}`,
    config.learner === 'solo'
      ? `single-agent episodes per update: ${config.problemsPerUpdate * config.attemptsPerProblem * config.teamSize} (${config.problemsPerUpdate} problems × ${config.attemptsPerProblem * config.teamSize} episodes)`
      : `teams per update: ${config.problemsPerUpdate * config.attemptsPerProblem} (${config.problemsPerUpdate} problems × ${config.attemptsPerProblem} attempts)`,
    '',
    ...rows.map((row) => row.map((cell, column) => (column < 3 ? cell.padEnd(widths[column]) : cell)).join('  ').trimEnd()),
    '',
    'readings of the paper:',
    ...trainPlanReadings(config).map((reading) => `  - ${reading}`),
    '',
    ...(() => {
      const deviations = [...config.deviations, ...implementationDeviations(config)];
      return [deviations.length === 0 ? 'deviations from the paper: none' : 'deviations from the paper:', ...deviations.map((deviation) => `  - ${deviation}`)];
    })(),
  ];
  return `${lines.join('\n')}\n`;
}
