// The exploration tools as the model sees them, with the descriptions of the paper's Table 2 verbatim.

import type { ToolSpec } from '../../common/tool-spec.js';

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
