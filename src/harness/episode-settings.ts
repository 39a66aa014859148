// The settings of an episode and their paper defaults per task (SPEC §1 and §7, Table 4), resolved
// and validated once before any agent runs, so a bad value fails with a message naming the field.

import { ConfigError } from '../errors.js';
import { MAX_PIECE_TOKENS } from '../policy/policy.js';
import { PROMPT_STYLES } from '../tasks/task.js';
import { formatMessagePerturbation, NO_PERTURBATION, parseMessagePerturbation } from './message-channel.js';
import type { EpisodeSettings } from './trace-events.js';

/** The per-task defaults: allowances and context. */
export interface TaskBudget {
  /** Work-phase tokens per agent (L). */
  readonly workAllowance: number;
  /** Tokens reserved for the final answer. */
  readonly finalAllowance: number;
  /** Context window per agent. */
  readonly contextLimit: number;
}

// Paper budgets by task name (SPEC §1, Table 4).
// Aggregation: L = 8,192 work + 1,024 final tokens; Qwen3-0.6B context 40,960 (Table 4).
const AGGREGATION_BUDGET: TaskBudget = { workAllowance: 8192, finalAllowance: 1024, contextLimit: 40_960 };
// Exploration: L = 8,192 (+1 final token, unused: the task takes no final answer); context 32,768 (Table 4).
const EXPLORATION_BUDGET: TaskBudget = { workAllowance: 8192, finalAllowance: 1, contextLimit: 32_768 };

/** Paper budgets by task name; each variant (single-digit aggregation, depth-2 trees) keeps its task's. */
export const TASK_BUDGETS: Readonly<Record<string, TaskBudget>> = {
  aggregation: AGGREGATION_BUDGET,
  'aggregation-digits': AGGREGATION_BUDGET,
  exploration: EXPLORATION_BUDGET,
  'exploration-d2': EXPLORATION_BUDGET,
};

/**
 * L of the team's total allowance N·L in the token cost (Eq. 1) and token efficiency (App. M): all an
 * agent may generate, its work allowance plus its final-answer allowance, as the team's generated
 * tokens Σᵢ|τᵢ| count both ("8,192 work tokens plus 1,024 for the final answer", App. A; for
 * exploration the one final token goes unused).
 */
export function agentAllowance(settings: Pick<TaskBudget, 'workAllowance' | 'finalAllowance'>): number {
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

/** Fills in defaults for `taskName` and validates every field. */
export function resolveEpisodeSettings(taskName: string, overrides: EpisodeSettingsOverrides): EpisodeSettings {
  const budget = TASK_BUDGETS[taskName] as TaskBudget | undefined;
  const pick = (field: keyof TaskBudget): number => {
    const value = overrides[field] ?? budget?.[field];
    if (value === undefined) {
      throw new ConfigError(`runEpisode: task "${taskName}" has no default ${field}; pass ${field} explicitly.`);
    }
    return value;
  };
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
