// Validation of the settings every episode shares (allowance, context, token-cost weight, prompt
// style), done once at createEpisode so that a bad preset fails before any agent runs.

import { ConfigError } from '../errors.js';
import { PROMPT_STYLES, type CreateEpisodeOptions, type TaskProblem } from './task.js';

/** Throws ConfigError naming the field when an episode setting is out of range. */
export function checkEpisodeSettings<P extends TaskProblem>(options: CreateEpisodeOptions<P>): void {
  for (const field of ['workAllowance', 'contextLimit'] as const) {
    const value = options[field];
    if (!Number.isSafeInteger(value) || value < 1) {
      throw new ConfigError(`createEpisode: ${field} must be a positive integer number of tokens, got ${String(value)}.`);
    }
  }
  const weight = options.tokenCostWeight;
  if (typeof weight !== 'number' || !Number.isFinite(weight) || weight < 0 || weight > 1) {
    throw new ConfigError(`createEpisode: tokenCostWeight must be a number in [0, 1] (the paper uses 0.25), got ${String(weight)}.`);
  }
  const style = options.promptStyle;
  if (style !== undefined && !PROMPT_STYLES.includes(style)) {
    throw new ConfigError(`createEpisode: promptStyle must be one of ${PROMPT_STYLES.join(', ')}, got ${JSON.stringify(style)}.`);
  }
}
