// The structured record of what the harness appended to an agent's context: the opening prompt, tool
// results (with the messages a read returned), notifications and the final-answer prompt. The tokens
// are the truth a model reads; these objects say the same thing in a form scripted policies and tests
// can act on without parsing text.

import type { JsonValue } from '../common/json-dumps.js';

/** A message as a reader receives it from read_messages. */
export interface ReceivedMessage {
  /** Board-wide message id, in order of sending. */
  readonly id: number;
  /** The sender's name. */
  readonly from: string;
  /** The message text. */
  readonly text: string;
}

/** The opening prompt: who the agent is and what it was told. */
export interface PromptItem {
  readonly kind: 'prompt';
  /** The agent's own name. */
  readonly agentName: string;
  /** Its teammates in its own shuffled order (empty without messaging). */
  readonly teammates: readonly string[];
  /** Whether the messaging tools are available. */
  readonly communication: boolean;
  /** The names of every tool the agent may call, in listed order. */
  readonly toolNames: readonly string[];
  /** The system prompt text (task prompt and harness rules). */
  readonly system: string;
  /** The first user turn. */
  readonly user: string;
  /** false: thinking mode off, every generation prompt ends in an empty reasoning block; absent when on. */
  readonly thinking?: false;
}

/** The output of one tool call, or of a call that was rejected before it ran. */
export interface ToolResultItem {
  readonly kind: 'tool_result';
  /** Episode-wide call id (null for a cut-off call, which is not a call). */
  readonly callId: number | null;
  /** The tool name as written; null when the call could not be parsed. */
  readonly name: string | null;
  /** The arguments as written (null when unparsed). */
  readonly arguments: Readonly<Record<string, JsonValue>> | null;
  /** Whether the call ran. */
  readonly ok: boolean;
  /** The output text the agent reads. */
  readonly output: string;
  /** For read_messages: the messages returned, oldest first. */
  readonly messages?: readonly ReceivedMessage[];
}

/** A pushed notification: unread counts by sender, never contents. */
export interface NotificationItem {
  readonly kind: 'notification';
  /** Unread messages per sender, in order of each sender's oldest unread message. */
  readonly unreadBySender: Readonly<Record<string, number>>;
}

/** The final-answer prompt of tasks that take one. */
export interface FinalPromptItem {
  readonly kind: 'final_prompt';
  /** The prompt text. */
  readonly text: string;
}

/** Anything the harness appends to an agent's context. */
export type ContextItem = PromptItem | ToolResultItem | NotificationItem | FinalPromptItem;
