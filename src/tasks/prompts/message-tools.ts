// The messaging tools' definitions as the model sees them, with the descriptions of the paper's
// Table 2 verbatim. The harness implements them (message board, notifications); they live here
// because they are prompt text, identical for every task, and removed when communication is off.

import type { ToolSpec } from '../../common/tool-spec.js';

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
