// The shared state of one team attempt while it runs: the task episode, the message board, the tool
// executor, the trace, and the rules that involve more than one agent — delivering
// messages (waking idle recipients at once), noticing that every agent is idle or finished (which
// ends the work phase: agents are asked for final answers, or released when the task takes none),
// and ending the whole episode (the exit reached, an abort, or a policy failure), which aborts every
// pending generation through one AbortController.

import { setMaxListeners } from 'node:events';
import type { GradeAnswerOptions, TaskEpisode } from '../tasks/task.js';
import type { MessageBoard, PostedMessage } from './message-board.js';
import type { CallExecution, ToolExecutor } from './tool-executor.js';
import type { EpisodeEndReason, EpisodeSettings, TraceEvent } from './trace-events.js';

/** Where an agent is: working (possibly idle), answering the final prompt, or done. */
export type AgentPhase = 'work' | 'final' | 'done';

/** Why an idle agent resumes: a message arrived, the work phase ended for everyone, or the episode ended. */
export type WakeReason = 'message' | 'final' | 'done' | 'end';

/** What the team sees of one of its agents (the agent loop). */
export interface TeamMember {
  readonly name: string;
  readonly phase: AgentPhase;
  /** Whether it waits for a message (work phase only). */
  readonly idle: boolean;
  /** A message reached it. */
  receiveMessage(): void;
  /** Resumes it if it waits. */
  release(reason: WakeReason): void;
}

/** Everything a team needs. */
export interface TeamOptions {
  /** The task's side of the attempt (prompts, tools, grading). */
  readonly episode: TaskEpisode;
  /** Allowances, context, piece size, sampling. */
  readonly settings: EpisodeSettings;
  /** Runs the agents' tool calls. */
  readonly executor: ToolExecutor;
  /** The attempt's message board. */
  readonly board: MessageBoard;
  /** Receives every trace event as it happens. */
  readonly emit: (event: TraceEvent) => void;
}

/** One running team attempt. */
export class Team {
  /** The episode settings. */
  readonly settings: EpisodeSettings;
  /** Whether the task takes a final answer (aggregation), so idle agents are asked for one. */
  readonly takesAnswer: boolean;
  private readonly episode: TaskEpisode;
  private readonly executor: ToolExecutor;
  private readonly board: MessageBoard;
  /** Aborted when the episode ends; every generation request carries its signal. */
  private readonly controller = new AbortController();
  /** The agents, by index (added by runEpisode). */
  private readonly agents: TeamMember[] = [];
  /** Set once the episode has ended early (exit, abort, failure). */
  endReason: EpisodeEndReason | null = null;
  /** The first infrastructure failure (a policy error), rethrown by runEpisode. */
  failure: { readonly error: unknown } | null = null;
  private readonly byName = new Map<string, TeamMember>();
  private readonly emitEvent: (event: TraceEvent) => void;
  private calls = 0;
  /** Generation pieces the team has finished: the clock of a delaying message channel. */
  private piecesFinished = 0;
  /** Messages a delaying channel holds back, with the piece count at which each arrives. */
  private readonly delayed: { readonly message: PostedMessage; readonly due: number }[] = [];

  /** A team over one task episode. */
  constructor(options: TeamOptions) {
    this.episode = options.episode;
    this.settings = options.settings;
    this.executor = options.executor;
    this.board = options.board;
    this.emitEvent = options.emit;
    // Every agent's pending generation listens on this one signal; teams of more than ten are normal.
    setMaxListeners(0, this.controller.signal);
    this.takesAnswer = options.episode.agentNames.every((_, index) => options.episode.finalPrompt(index) !== null);
  }

  /** Whether the episode has ended early; agents stop at their next step. */
  get ended(): boolean {
    return this.endReason !== null;
  }

  /** Aborted when the episode ends; every generation request carries it. */
  get signal(): AbortSignal {
    return this.controller.signal;
  }

  /** Adds an agent (in index order). */
  addAgent(agent: TeamMember): void {
    this.agents.push(agent);
    this.byName.set(agent.name, agent);
  }

  /** Runs agent `agentIndex`'s call of a tool (messaging or the task's). */
  execute(agentIndex: number, call: { readonly name: string; readonly arguments: unknown }, callId: number): CallExecution {
    return this.executor.execute(agentIndex, call, callId);
  }

  /** The agent's unread message counts by sender. */
  unreadBySender(agentName: string): Record<string, number> {
    return this.board.unreadBySender(agentName);
  }

  /** The task's final-answer prompt for the agent (null when the task takes none). */
  finalPrompt(agentIndex: number): string | null {
    return this.episode.finalPrompt(agentIndex);
  }

  /** Grades and records an agent's final answer. */
  gradeAnswer(options: GradeAnswerOptions): boolean {
    return this.episode.gradeAnswer(options);
  }

  /** Records a trace event. */
  emit(event: TraceEvent): void {
    this.emitEvent(event);
  }

  /** The next episode-wide tool call id. */
  nextCallId(): number {
    const id = this.calls;
    this.calls += 1;
    return id;
  }

  /**
   * Records the arrival at every recipient at once (a pending notification, or a wake for an idle
   * one), or after `delayPieces` more team pieces under a delaying channel.
   */
  deliver(message: PostedMessage, delayPieces = 0): void {
    if (delayPieces > 0) {
      this.delayed.push({ message, due: this.piecesFinished + delayPieces });
      return;
    }
    for (const recipient of message.recipients) this.byName.get(recipient)?.receiveMessage();
  }

  /** An agent finished a piece: delayed messages now due arrive. */
  pieceFinished(): void {
    this.piecesFinished += 1;
    this.arriveDelayed((due) => due <= this.piecesFinished);
  }

  /** Delivers, in order of sending, the held-back messages whose due count passes `isDue`. */
  private arriveDelayed(isDue: (due: number) => boolean): void {
    const arriving = this.delayed.filter((entry) => isDue(entry.due));
    if (arriving.length === 0) return;
    this.delayed.splice(0, this.delayed.length, ...this.delayed.filter((entry) => !isDue(entry.due)));
    for (const { message } of arriving) {
      this.board.deliver(message);
      this.deliver(message);
    }
  }

  /** When every agent is idle or out of its work phase, ends the work phase of the idle ones. */
  checkAllIdle(): void {
    if (this.ended) return;
    if (this.agents.some((agent) => agent.phase === 'work' && !agent.idle)) return;
    // Everyone waits: messages a delaying channel still holds arrive now, earliest first, until one wakes someone.
    while (this.delayed.length > 0) {
      const next = Math.min(...this.delayed.map((entry) => entry.due));
      this.arriveDelayed((due) => due === next);
      if (this.agents.some((agent) => agent.phase === 'work' && !agent.idle)) return;
    }
    for (const agent of this.agents) {
      if (agent.phase === 'work' && agent.idle) agent.release(this.takesAnswer ? 'final' : 'done');
    }
  }

  /** Ends the episode for everyone: aborts pending generations and releases idle agents. */
  end(reason: EpisodeEndReason): void {
    if (this.ended) return;
    this.endReason = reason;
    this.controller.abort();
    for (const agent of this.agents) agent.release('end');
  }

  /** Records an infrastructure failure and ends the episode; runEpisode rethrows it. */
  fail(error: unknown): void {
    if (this.failure === null) this.failure = { error };
    this.end('aborted');
  }
}
