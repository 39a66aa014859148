// Hand-built episode traces for the metrics tests: a builder that writes the events a test names
// (messages, reads, moves) between a valid episode_start and episode_end, and checks the result with
// the harness's own trace parser so every hand-built trace is a valid version-1 trace.

import { parseTrace, splitEpisodes, traceToJsonl, TRACE_VERSION, type EpisodeTrace, type TraceEvent } from '../../src/harness/index.js';

/** What the episode is. */
export interface TraceBuilderOptions {
  readonly task: string;
  readonly agents: readonly string[];
  readonly problemId?: string;
}

/** Writes one episode's events in the order the test calls its methods. */
export class TraceBuilder {
  private readonly events: TraceEvent[] = [];
  private nextCall = 0;
  private nextMessage = 0;

  constructor(private readonly options: TraceBuilderOptions) {
    const n = options.agents.length;
    this.events.push({
      type: 'episode_start',
      traceVersion: TRACE_VERSION,
      task: options.task,
      problemId: options.problemId ?? 'p/0',
      n,
      agentNames: options.agents,
      teammates: options.agents.map((agent) => options.agents.filter((other) => other !== agent)),
      seed: 'test',
      samplingSeeds: options.agents.map((_, index) => String(index + 1)),
      communication: true,
      settings: { workAllowance: 100, finalAllowance: 10, contextLimit: 1000, generationPieceTokens: 100, temperature: 1, draws: 0, tokenCostWeight: 0.25 },
    });
  }

  /** A broadcast from `from` to every teammate; returns its message id. */
  broadcast(from: string, text = 'hello'): number {
    return this.message(from, 'all', this.options.agents.filter((agent) => agent !== from), text);
  }

  /** A direct message; returns its message id. */
  direct(from: string, to: string, text = 'hello'): number {
    return this.message(from, to, [to], text);
  }

  /** A read_messages call that returned these message ids. */
  read(agent: string, messageIds: readonly number[]): this {
    this.events.push({ type: 'read', agent, callId: this.call(), messageIds });
    return this;
  }

  /** A move from one room to another. */
  move(agent: string, from: string, to: string): this {
    this.events.push({ type: 'task_event', agent, callId: this.call(), event: { type: 'move', from, to, exit: false } });
    return this;
  }

  /** Ends the episode and returns it, parsed back from JSONL. */
  end(outcome: { success?: boolean; tokens?: readonly number[] } = {}): EpisodeTrace {
    const tokens = outcome.tokens ?? this.options.agents.map(() => 10);
    this.events.push({
      type: 'episode_end',
      reason: 'finished',
      teamSuccess: outcome.success ?? false,
      agentSuccess: this.options.agents.map(() => false),
      tokens: this.options.agents.map((agent, index) => ({ agent, work: tokens[index], final: 0 })),
      totalTokens: tokens.reduce((total, value) => total + value, 0),
    });
    const [episode] = splitEpisodes(parseTrace(traceToJsonl(this.events), 'hand-built trace'));
    return episode;
  }

  private message(from: string, to: string, recipients: readonly string[], text: string): number {
    const messageId = this.nextMessage;
    this.nextMessage += 1;
    this.events.push({ type: 'message', agent: from, callId: this.call(), messageId, to, recipients, text });
    return messageId;
  }

  private call(): number {
    this.nextCall += 1;
    return this.nextCall - 1;
  }
}
