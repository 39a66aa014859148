// The exploration tools as the model sees them, with the descriptions of the paper's Table 2 verbatim.
// The compact tools (promptStyle 'compact') are ours, not the paper's: the same names and arguments
// with one-line descriptions and no per-argument description.

import type { ToolSpec } from '../../common/tool-spec.js';
import type { PromptStyle } from '../task.js';

/** move(room): Table 2. */
export const MOVE_TOOL: ToolSpec = {
  name: 'move',
  description:
    'Walk through a door of your current room into the named adjacent room. Returns what you see there. ' +
    'Your position is private: moving never moves a teammate.',
  parameters: {
    type: 'object',
    properties: { room: { type: 'string', description: "The name of a room listed in your current room's doors." } },
    required: ['room'],
    additionalProperties: false,
  },
};

/** look(): Table 2. */
export const LOOK_TOOL: ToolSpec = {
  name: 'look',
  description: 'Describe your current room again without moving.',
  parameters: { type: 'object', properties: {}, required: [], additionalProperties: false },
};

/** The exploration tools in the order they are listed to the model. */
export const EXPLORATION_TOOLS: readonly ToolSpec[] = [MOVE_TOOL, LOOK_TOOL];

/** move(room) with a one-line description (ours, not the paper's). */
export const COMPACT_MOVE_TOOL: ToolSpec = {
  name: 'move',
  description: 'Walk through a door of your current room into the named room.',
  parameters: { type: 'object', properties: { room: { type: 'string' } }, required: ['room'] },
};

/** look() with a one-line description (ours, not the paper's). */
export const COMPACT_LOOK_TOOL: ToolSpec = {
  name: 'look',
  description: 'Describe your current room again.',
  parameters: { type: 'object', properties: {} },
};

/** The compact exploration tools, in the order of EXPLORATION_TOOLS. */
export const COMPACT_EXPLORATION_TOOLS: readonly ToolSpec[] = [COMPACT_MOVE_TOOL, COMPACT_LOOK_TOOL];

/** The exploration tools in a prompt style (default 'paper': Table 2). */
export function explorationTools(promptStyle: PromptStyle = 'paper'): readonly ToolSpec[] {
  return promptStyle === 'compact' ? COMPACT_EXPLORATION_TOOLS : EXPLORATION_TOOLS;
}
