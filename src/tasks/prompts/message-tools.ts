// The messaging tools' definitions as the model sees them, with the descriptions of the paper's
// Table 2 verbatim. The harness implements them (message board, notifications); they live here
// because they are prompt text, identical for every task, and removed when communication is off.
// The compact tools (promptStyle 'compact') are ours, not the paper's: the same names, arguments and
// behaviour with one-line descriptions and no per-argument descriptions.

import type { ToolSpec } from '../../common/tool-spec.js';
import type { PromptStyle } from '../task.js';

/** The recipient word that sends a message to every teammate. */
export const BROADCAST_RECIPIENT = 'all';

/** message(to, text): Table 2. */
export const MESSAGE_TOOL: ToolSpec = {
  name: 'message',
  description:
    'Send plans, questions, tentative ideas, dead ends, or checked results to one available teammate or all ' +
    'available teammates. Label uncertainty and verification status. Delivery is immediate. Sending does not ' +
    'read incoming messages or wait for replies; use read_messages when notified.',
  parameters: {
    type: 'object',
    properties: {
      to: { type: 'string', description: "A teammate's name, or all to send to every teammate." },
      text: { type: 'string', description: 'The message text.' },
    },
    required: ['to', 'text'],
    additionalProperties: false,
  },
};

/** read_messages(): Table 2. */
export const READ_MESSAGES_TOOL: ToolSpec = {
  name: 'read_messages',
  description: 'Read explicitly received unread peer messages.',
  parameters: { type: 'object', properties: {}, required: [], additionalProperties: false },
};

/** check_notifications(): Table 2. */
export const CHECK_NOTIFICATIONS_TOOL: ToolSpec = {
  name: 'check_notifications',
  description: 'Check unread message counts by sender without reading messages.',
  parameters: { type: 'object', properties: {}, required: [], additionalProperties: false },
};

/** The messaging tools in the order they are listed to the model. */
export const MESSAGE_TOOLS: readonly ToolSpec[] = [MESSAGE_TOOL, READ_MESSAGES_TOOL, CHECK_NOTIFICATIONS_TOOL];

/** Names of the messaging tools, for telling them apart from task tools. */
export const MESSAGE_TOOL_NAMES: readonly string[] = MESSAGE_TOOLS.map((tool) => tool.name);

/** message(to, text) with a one-line description (ours, not the paper's). */
export const COMPACT_MESSAGE_TOOL: ToolSpec = {
  name: 'message',
  description: 'Send a message to one teammate or all.',
  parameters: { type: 'object', properties: { to: { type: 'string' }, text: { type: 'string' } }, required: ['to', 'text'] },
};

/** read_messages() with a one-line description (ours, not the paper's). */
export const COMPACT_READ_MESSAGES_TOOL: ToolSpec = {
  name: 'read_messages',
  description: 'Read unread messages.',
  parameters: { type: 'object', properties: {} },
};

/** check_notifications() with a one-line description (ours, not the paper's). */
export const COMPACT_CHECK_NOTIFICATIONS_TOOL: ToolSpec = {
  name: 'check_notifications',
  description: 'Check unread message counts by sender.',
  parameters: { type: 'object', properties: {} },
};

/** The compact messaging tools, in the order of MESSAGE_TOOLS. */
export const COMPACT_MESSAGE_TOOLS: readonly ToolSpec[] = [COMPACT_MESSAGE_TOOL, COMPACT_READ_MESSAGES_TOOL, COMPACT_CHECK_NOTIFICATIONS_TOOL];

/** The messaging tools in a prompt style (default 'paper': Table 2). */
export function messageTools(promptStyle: PromptStyle = 'paper'): readonly ToolSpec[] {
  return promptStyle === 'compact' ? COMPACT_MESSAGE_TOOLS : MESSAGE_TOOLS;
}
