// Runs one complete tool call of one agent: the messaging tools against the team's message board
// (message, read_messages, check_notifications; Table 2) and everything else through the task's
// callTool. Nothing a model writes throws here: an unknown tool, bad arguments, a nonexistent
// teammate or a message to oneself become {"error": ...} outputs the agent reads.

import { jsonDumps } from '../common/json-dumps.js';
import { toolErrorOutput } from '../common/tool-call-error.js';
import type { ToolSpec } from '../common/tool-spec.js';
import { validateToolCall, type ValidatedToolCall } from '../common/tool-validation.js';
import type { ReceivedMessage } from '../policy/context-item.js';
import { BROADCAST_RECIPIENT } from '../tasks/prompts/message-tools.js';
import type { TaskEpisode } from '../tasks/task.js';
import type { MessageBoard, PostedMessage } from './message-board.js';
import type { MessageChannel } from './message-channel.js';
import { notificationOutput } from './notification.js';
import type { TraceEvent } from './trace-events.js';

/** What running a call produced. */
export interface CallExecution {
  /** Whether the call ran. */
  readonly ok: boolean;
  /** The output the agent reads. */
  readonly output: string;
  /** Messages a read returned. */
  readonly messages?: readonly ReceivedMessage[];
  /** A posted message, to deliver to its recipients (after `delayPieces` team pieces when the channel delays it). */
  readonly posted?: PostedMessage;
  readonly delayPieces?: number;
  /** The call showed the agent its current unread counts (check_notifications). */
  readonly showedUnread?: boolean;
  /** A read left messages unread (more than 16 were waiting): a notification with the rest is due. */
  readonly unreadLeft?: boolean;
  /** The call ends the episode (the exit was reached). */
  readonly endsEpisode?: boolean;
  /** Trace events describing what the call did (message, read, task_event). */
  readonly details: readonly TraceEvent[];
}

/** Options of ToolExecutor. */
export interface ToolExecutorOptions {
  /** The task episode (its own tools). */
  readonly episode: TaskEpisode;
  /** The team's board. */
  readonly board: MessageBoard;
  /** Each agent's tools, by index, in the order they were listed to it. */
  readonly toolsByAgent: readonly (readonly ToolSpec[])[];
  /** The message channel (intact unless an ablation perturbs it). */
  readonly channel: MessageChannel;
}

/** Executes calls for the agents of one team attempt. */
export class ToolExecutor {
  private readonly episode: TaskEpisode;
  private readonly board: MessageBoard;
  private readonly toolsByAgent: readonly (readonly ToolSpec[])[];
  private readonly channel: MessageChannel;

  /** An executor over one episode's board and task tools. */
  constructor(options: ToolExecutorOptions) {
    this.episode = options.episode;
    this.board = options.board;
    this.toolsByAgent = options.toolsByAgent;
    this.channel = options.channel;
  }

  /** Validates and runs one parsed call of agent `agentIndex`. */
  execute(agentIndex: number, call: { readonly name: string; readonly arguments: unknown }, callId: number): CallExecution {
    const validation = validateToolCall({ call, tools: this.toolsByAgent[agentIndex] });
    if (!validation.ok) return { ok: false, output: toolErrorOutput(validation.error), details: [] };
    const agent = this.episode.agentNames[agentIndex];
    switch (validation.call.name) {
      case 'message':
        return this.message(agentIndex, agent, validation.call, callId);
      case 'read_messages':
        return this.read(agent, callId);
      case 'check_notifications':
        return { ok: true, output: notificationOutput(this.board.unreadBySender(agent)), showedUnread: true, details: [] };
      default:
        return this.taskCall(agentIndex, agent, validation.call, callId);
    }
  }

  private message(agentIndex: number, agent: string, call: ValidatedToolCall, callId: number): CallExecution {
    const to = call.arguments.to as string;
    const text = call.arguments.text as string;
    const teammates = this.episode.teammates(agentIndex);
    if (to === agent) return rejected(`you cannot message yourself; send to a teammate (${teammates.join(', ')}) or ${BROADCAST_RECIPIENT}`);
    const recipients = to === BROADCAST_RECIPIENT ? teammates : teammates.includes(to) ? [to] : null;
    if (recipients === null) {
      return rejected(`no teammate named ${JSON.stringify(to)}; your teammates are ${teammates.join(', ') || '(none)'}, or use ${BROADCAST_RECIPIENT}`);
    }
    // The sender reads where it addressed the message; the channel decides where it goes.
    const route = this.channel.route(agent, recipients, teammates, text);
    const message = { from: agent, to, recipients: route.recipients, text: route.text, callId };
    const posted = route.delayPieces > 0 ? this.board.record(message) : this.board.post(message);
    const changed = route.recipients.length !== recipients.length || route.recipients.some((name, i) => name !== recipients[i]);
    return {
      ok: true,
      output: jsonDumps({ delivered_to: [...recipients] }),
      posted,
      ...(route.delayPieces > 0 ? { delayPieces: route.delayPieces } : {}),
      details: [
        {
          type: 'message',
          agent,
          callId,
          messageId: posted.id,
          to,
          recipients: route.recipients,
          text,
          ...(changed ? { addressed: [...recipients] } : {}),
          ...(route.text !== text ? { deliveredText: route.text } : {}),
          ...(route.delayPieces > 0 ? { delayPieces: route.delayPieces } : {}),
        },
      ],
    };
  }

  private read(agent: string, callId: number): CallExecution {
    const batch = this.board.read(agent);
    const messages = batch.map((message) => ({ id: message.id, from: message.from, text: message.text }));
    return {
      ok: true,
      output: jsonDumps({ messages: messages.map((message) => ({ from: message.from, text: message.text })) }),
      messages,
      ...(this.board.unreadCount(agent) > 0 ? { unreadLeft: true } : {}),
      details: [{ type: 'read', agent, callId, messageIds: messages.map((message) => message.id) }],
    };
  }

  private taskCall(agentIndex: number, agent: string, call: ValidatedToolCall, callId: number): CallExecution {
    const result = this.episode.callTool({ agentIndex, name: call.name, args: call.arguments });
    return {
      ok: result.ok,
      output: result.output,
      ...(result.endsEpisode === true ? { endsEpisode: true } : {}),
      details: result.event === undefined ? [] : [{ type: 'task_event', agent, callId, event: result.event }],
    };
  }
}

function rejected(message: string): CallExecution {
  return { ok: false, output: toolErrorOutput({ message }), details: [] };
}
