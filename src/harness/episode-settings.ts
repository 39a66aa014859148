// The settings of an episode, with the task's defaults (Task.defaults: the paper's allowances and
// context, Table 4) and the paper's sampling settings, resolved and validated once before any agent
// runs, so a bad value fails with a message naming the field.

import { ConfigError } from '../errors.js';
import { MAX_PIECE_TOKENS } from '../policy/policy.js';
import { getTask } from '../tasks/index.js';
import { PROMPT_STYLES, type Task, type TaskDefaults } from '../tasks/task.js';
import { formatMessagePerturbation, NO_PERTURBATION, parseMessagePerturbation } from './message-channel.js';
import type { EpisodeSettings } from './trace-events.js';

/**
 * L of the team's total allowance N·L in the token cost (Eq. 1) and token efficiency (App. M): all an
 * agent may generate, its work allowance plus its final-answer allowance, as the team's generated
 * tokens Σᵢ|τᵢ| count both ("8,192 work tokens plus 1,024 for the final answer", App. A; for
 * exploration the one final token goes unused).
 */
export function agentAllowance(settings: Pick<TaskDefaults, 'workAllowance' | 'finalAllowance'>): number {
  return settings.workAllowance + settings.finalAllowance;
}

/** Sampling temperature of training (Table 4: 1.0, no top-p/top-k). */
export const TRAINING_TEMPERATURE = 1.0;
/** Token-cost weight λ (SPEC §6). */
export const TOKEN_COST_WEIGHT = 0.25;

/** Settings a caller may override; the rest come from the task's budget and the paper. */
export type EpisodeSettingsOverrides = Partial<Omit<EpisodeSettings, 'thinking'>> & {
  /** Qwen3's thinking mode (default on, Table 4). */
  readonly thinking?: boolean;
};

function positiveInteger(field: string, value: number, max = Number.MAX_SAFE_INTEGER): number {
  if (!Number.isSafeInteger(value) || value < 1 || value > max) {
    throw new ConfigError(`runEpisode: ${field} must be an integer in 1..${max}, got ${String(value)}.`);
  }
  return value;
}

/** Fills in the defaults of `task` (a Task, or a registered task's name) and validates every field. */
export function resolveEpisodeSettings(task: Task | string, overrides: EpisodeSettingsOverrides): EpisodeSettings {
  const { defaults } = typeof task === 'string' ? getTask(task) : task;
  const pick = (field: 'workAllowance' | 'finalAllowance' | 'contextLimit'): number => overrides[field] ?? defaults[field];
  const temperature = overrides.temperature ?? TRAINING_TEMPERATURE;
  if (!Number.isFinite(temperature) || temperature < 0) {
    throw new ConfigError(`runEpisode: temperature must be a finite number >= 0, got ${String(temperature)}.`);
  }
  const draws = overrides.draws ?? 0;
  if (!Number.isSafeInteger(draws) || draws < 0) {
    throw new ConfigError(`runEpisode: draws must be an integer >= 0 (K extra draws per position), got ${String(draws)}.`);
  }
  const tokenCostWeight = overrides.tokenCostWeight ?? TOKEN_COST_WEIGHT;
  const promptStyle = overrides.promptStyle ?? 'paper';
  if (!PROMPT_STYLES.includes(promptStyle)) {
    throw new ConfigError(`runEpisode: promptStyle must be one of ${PROMPT_STYLES.join(', ')}, got ${JSON.stringify(promptStyle)}.`);
  }
  const messages = overrides.messages === undefined ? NO_PERTURBATION : parseMessagePerturbation(overrides.messages, 'runEpisode: messages');
  const thinking = overrides.thinking ?? true;
  if (typeof thinking !== 'boolean') throw new ConfigError(`runEpisode: thinking must be true or false, got ${JSON.stringify(thinking)}.`);
  return {
    workAllowance: positiveInteger('workAllowance', pick('workAllowance')),
    finalAllowance: positiveInteger('finalAllowance', pick('finalAllowance')),
    contextLimit: positiveInteger('contextLimit', pick('contextLimit')),
    generationPieceTokens: positiveInteger('generationPieceTokens', overrides.generationPieceTokens ?? MAX_PIECE_TOKENS, MAX_PIECE_TOKENS),
    temperature,
    draws,
    tokenCostWeight,
    // The paper's wording is the default and is not written, so paper settings and traces stay as they were.
    ...(promptStyle === 'paper' ? {} : { promptStyle }),
    // Likewise the intact message channel.
    ...(messages.kind === 'none' ? {} : { messages: formatMessagePerturbation(messages) }),
    // Likewise thinking on (Table 4).
    ...(thinking ? {} : { thinking: false as const }),
  };
}
