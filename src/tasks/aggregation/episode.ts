// One team attempt at an aggregation problem: agent i holds problem.numbers[i]; the task has no
// tools of its own (agents only message), asks for a final answer, and grades it by exact match.

import { ConfigError } from '../../errors.js';
import { checkEpisodeSettings } from '../episode-settings.js';
import { createRoster } from '../roster.js';
import type { CreateEpisodeOptions, GradeAnswerOptions, TaskEpisode, ToolCallRequest, ToolResult } from '../task.js';
import { toolError } from '../tool-error.js';
import { gradeAggregationAnswer } from './grading.js';
import type { AggregationProblem } from './problem.js';
import { aggregationFinalPrompt, aggregationFirstUserMessage, aggregationSystemPrompt } from './prompts.js';

/** Sets up one team attempt; throws ConfigError when the team is larger than the problem. */
export function createAggregationEpisode(options: CreateEpisodeOptions<AggregationProblem>): TaskEpisode {
  checkEpisodeSettings(options);
  const { problem, communication, tokenCostWeight, promptStyle = 'paper' } = options;
  const roster = createRoster(options);
  const agentCount = roster.agentCount;
  if (agentCount > problem.numbers.length) {
    throw new ConfigError(
      `createEpisode: problem ${problem.id} has ${problem.numbers.length} numbers, too few for a team of ${agentCount}; ` +
        'use a development or evaluation problem (16 numbers) or a smaller team.',
    );
  }
  const numbers = problem.numbers.slice(0, agentCount);
  const correct = new Array<boolean>(agentCount).fill(false);

  return {
    agentCount,
    agentNames: roster.agentNames,
    teammates: (agentIndex) => roster.teammates(agentIndex),
    systemPrompt: (agentIndex) =>
      aggregationSystemPrompt({ agentCount, communication, tokenCostWeight, promptStyle, introduction: roster.introduction(agentIndex) }),
    firstUserMessage: (agentIndex) => {
      roster.checkAgent(agentIndex);
      return aggregationFirstUserMessage({
        agentCount,
        communication,
        promptStyle,
        privateNumber: numbers[agentIndex],
        introduction: roster.introduction(agentIndex),
      });
    },
    toolSpecs: () => [],
    callTool: (request: ToolCallRequest): ToolResult => {
      roster.checkAgent(request.agentIndex);
      const written = JSON.stringify(request.name) ?? String(request.name);
      return toolError(`unknown tool ${written}; this task has no tools besides messaging`);
    },
    finalPrompt: (agentIndex) => {
      roster.checkAgent(agentIndex);
      return aggregationFinalPrompt({ agentCount, communication });
    },
    gradeAnswer: (answer: GradeAnswerOptions) => {
      roster.checkAgent(answer.agentIndex);
      const isCorrect = typeof answer.text === 'string' && gradeAggregationAnswer({ text: answer.text, numbers });
      correct[answer.agentIndex] = isCorrect;
      return isCorrect;
    },
    agentSucceeded: (agentIndex) => {
      roster.checkAgent(agentIndex);
      return correct[agentIndex];
    },
    teamSucceeded: () => correct.some(Boolean),
  };
}
