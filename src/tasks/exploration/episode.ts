// One team attempt at a search tree: every agent starts in the start room of its own copy, move and
// look act on its private position only, and the first move into the exit ends the episode for the
// whole team. There is no final answer: claims in text are never graded (Appendix H).

import { checkEpisodeSettings } from '../episode-settings.js';
import { createRoster } from '../roster.js';
import { validateToolCall } from '../../common/tool-validation.js';
import type { CreateEpisodeOptions, TaskEpisode, ToolCallRequest, ToolResult } from '../task.js';
import { toolError } from '../tool-error.js';
import { observeRoom } from './observation.js';
import type { ExplorationProblem } from './problem.js';
import { explorationFirstUserMessage, explorationSystemPrompt } from './prompts.js';
import { explorationTools, MOVE_TOOL } from './tools.js';

interface AgentPosition {
  room: string;
  arrivedFrom: string | null;
}

/** Sets up one team attempt on the problem's tree. */
export function createExplorationEpisode(options: CreateEpisodeOptions<ExplorationProblem>): TaskEpisode {
  checkEpisodeSettings(options);
  const { problem, communication, workAllowance, contextLimit, promptStyle = 'paper' } = options;
  const tools = explorationTools(promptStyle);
  const tree = problem.tree;
  const roster = createRoster(options);
  const positions: AgentPosition[] = roster.agentNames.map(() => ({ room: tree.start, arrivedFrom: null }));
  const reachedExit = positions.map(() => false);
  let finished = false;

  const look = (agentIndex: number): ToolResult => {
    const { room, arrivedFrom } = positions[agentIndex];
    return { ok: true, output: observeRoom({ tree, room, arrivedFrom }), event: { type: 'look', room } };
  };

  const move = (agentIndex: number, target: string): ToolResult => {
    const position = positions[agentIndex];
    const doors = tree.doors.get(position.room) ?? [];
    if (!doors.includes(target)) {
      return toolError(
        `'${target}' is not a door of your current room ${position.room}. Doors: ${doors.join(', ')}.`,
      );
    }
    const from = position.room;
    position.arrivedFrom = from;
    position.room = target;
    const exit = target === tree.exit;
    if (exit) {
      reachedExit[agentIndex] = true;
      finished = true;
    }
    return {
      ok: true,
      output: observeRoom({ tree, room: target, arrivedFrom: from }),
      event: { type: 'move', from, to: target, exit },
      ...(exit ? { endsEpisode: true } : {}),
    };
  };

  return {
    agentCount: roster.agentCount,
    agentNames: roster.agentNames,
    teammates: (agentIndex) => roster.teammates(agentIndex),
    systemPrompt: (agentIndex) =>
      explorationSystemPrompt({ communication, introduction: roster.introduction(agentIndex), workAllowance, contextLimit, promptStyle }),
    firstUserMessage: (agentIndex) => {
      roster.checkAgent(agentIndex);
      return explorationFirstUserMessage(observeRoom({ tree, room: tree.start, arrivedFrom: null }));
    },
    toolSpecs: () => tools,
    callTool: (request: ToolCallRequest): ToolResult => {
      roster.checkAgent(request.agentIndex);
      const validation = validateToolCall({ call: { name: request.name, arguments: request.args }, tools });
      if (!validation.ok) return toolError(validation.error.message);
      if (finished) return toolError('The episode has ended: the exit has been reached.');
      const { name, arguments: args } = validation.call;
      return name === MOVE_TOOL.name ? move(request.agentIndex, args.room as string) : look(request.agentIndex);
    },
    finalPrompt: (agentIndex) => {
      roster.checkAgent(agentIndex);
      return null;
    },
    gradeAnswer: (answer) => {
      roster.checkAgent(answer.agentIndex);
      return false;
    },
    agentSucceeded: (agentIndex) => {
      roster.checkAgent(agentIndex);
      return reachedExit[agentIndex];
    },
    teamSucceeded: () => reachedExit.some(Boolean),
  };
}
