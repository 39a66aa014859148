// One agent of a team as an async loop (SPEC §3, Appendix F): generate a piece of at most 1,024
// tokens, parse the response so far (docs/chat-format.md §4.6), run complete tool calls and append
// their outputs, incorporate a pending notification after the piece, continue a cut response as it
// stands, go idle after a response without a call (woken at once by a message), and end the work
// phase on a final answer, a spent allowance, a full context, or when every agent is idle or
// finished; then, for tasks that take one, ask once for the final answer with its own allowance.
// Nothing the model writes throws: every problem becomes a tool output the agent reads.

import { toolErrorOutput } from '../common/tool-call-error.js';
import type { PieceFinish } from '../model/chat/piece-finish.js';
import { parseAssistantResponse, type CutToolCall, type ParsedResponse } from '../model/chat/tool-call-parser.js';
import { AgentSequence, type ContextAppend } from '../policy/agent-sequence.js';
import type { ContextItem, PromptItem } from '../policy/context-item.js';
import { PolicyError } from '../policy/policy-error.js';
import type { GenerateResult } from '../policy/policy.js';
import type { Policy } from '../policy/policy.js';
import type { ContextRenderer, OutputBlock } from './context-renderer.js';
import type { CallExecution } from './tool-executor.js';
import { notificationOutput } from './notification.js';
import { PendingNotification } from './pending-notification.js';
import { ResponseDecoder } from './response-decoder.js';
import type { StopTokens } from './stop-tokens.js';
import type { AgentPhase, Team, TeamMember, WakeReason } from './team.js';
import type { PhaseReason } from './trace-events.js';

export type { AgentPhase, WakeReason } from './team.js';

/** What an agent loop starts from: the team it belongs to and the collaborators it uses itself. */
export interface AgentLoopOptions {
  /** The team: its settings, trace, tools, board, grading, and the rules that involve every agent. */
  readonly team: Team;
  /** The policy all agents generate with. */
  readonly policy: Policy;
  /** Renders and tokenizes context appends. */
  readonly renderer: ContextRenderer;
  /** The stop markers' ids. */
  readonly stopTokens: StopTokens;
  /** Its index in the team. */
  readonly index: number;
  /** Its opening prompt (name, teammates, text). */
  readonly prompt: PromptItem;
  /** Its sampling seed. */
  readonly samplingSeed: bigint;
  /** The context limit of the work phase (room for the final prompt and answer held back). */
  readonly workContextLimit: number;
}

/** One agent's state and loop. */
export class AgentLoop implements TeamMember {
  /** The agent's index. */
  readonly index: number;
  /** The agent's name. */
  readonly name: string;
  /** Its token history. */
  readonly sequence: AgentSequence;
  /** Its phase. */
  phase: AgentPhase = 'work';
  /** Whether it waits for a message (work phase only). */
  idle = false;
  /** Tokens generated in the work phase. */
  workTokens = 0;
  /** Tokens generated in the final phase. */
  finalTokens = 0;
  /** Its graded final answer (text after ####), or null. */
  answer: string | null = null;

  private readonly team: Team;
  private readonly policy: Policy;
  private readonly renderer: ContextRenderer;
  private readonly stopTokens: StopTokens;
  private readonly workContextLimit: number;
  private readonly notification = new PendingNotification();
  private lastFinish: PieceFinish = 'end';
  private readonly response: ResponseDecoder;
  private wake: ((reason: WakeReason) => void) | null = null;

  /** An agent whose history starts with `prompt`'s rendered context. */
  constructor(options: AgentLoopOptions) {
    this.team = options.team;
    this.policy = options.policy;
    this.renderer = options.renderer;
    this.stopTokens = options.stopTokens;
    this.index = options.index;
    this.name = options.prompt.agentName;
    this.workContextLimit = options.workContextLimit;
    this.sequence = new AgentSequence({ agentIndex: options.index, agentName: this.name, samplingSeed: options.samplingSeed });
    this.response = new ResponseDecoder(this.policy.tokenizer);
  }

  /** Appends the opening prompt (rendered by the caller). */
  appendPrompt(append: ContextAppend): void {
    this.sequence.appendContext(append);
    this.team.emit({ type: 'prompt', agent: this.name, tokens: append.tokens.length });
  }

  /** Runs the agent until it is done or the episode ends; never rejects (failures go to the team). */
  async run(): Promise<void> {
    try {
      while (!this.team.ended && this.phase !== 'done') {
        if (this.phase === 'work') await this.workStep();
        else await this.finalStep();
      }
    } catch (error) {
      this.team.fail(error);
    }
    if (this.phase !== 'done') this.finish(this.team.endReason === 'exit' ? 'exit' : 'aborted');
    this.policy.release?.(this.sequence);
  }

  /** A message reached this agent: its notification is pending, and an idle agent wakes at once. */
  receiveMessage(): void {
    if (this.phase !== 'work') return;
    this.notification.messageArrived();
    if (this.idle) this.release('message');
  }

  /** Resumes an idle agent (no effect on one that is not waiting). */
  release(reason: WakeReason): void {
    const wake = this.wake;
    if (wake === null) return;
    this.wake = null;
    this.idle = false;
    wake(reason);
  }

  private async workStep(): Promise<void> {
    const { workAllowance, generationPieceTokens } = this.team.settings;
    const allowanceLeft = workAllowance - this.workTokens;
    if (allowanceLeft <= 0) return this.endWork('allowance');
    const contextLeft = this.workContextLimit - this.sequence.length;
    if (contextLeft <= 0) return this.endWork('context');
    const finish = await this.generatePiece(Math.min(generationPieceTokens, allowanceLeft, contextLeft), 'work');
    if (finish === null) return;
    const parsed = parseAssistantResponse({ text: this.response.text, finish });
    this.lastFinish = finish;
    if (this.team.takesAnswer && parsed.finalAnswer !== null) {
      this.recordAnswer(parsed.finalAnswer.answer, 'work');
      return this.finish('answered');
    }
    if (parsed.calls.length > 0) return this.runCalls(parsed, finish);
    if (finish === 'context') return this.endWork('context');
    if (this.workTokens >= workAllowance) return this.endWork('allowance');
    if (finish === 'length') {
      const unread = this.takeNotification();
      if (unread !== null) this.appendTurn(parsed.cutCall === null ? [] : [this.cutBlock(parsed.cutCall)], finish, unread);
      return;
    }
    return this.idleUntilWoken(parsed.cutCall);
  }

  private async finalStep(): Promise<void> {
    const { finalAllowance, contextLimit, generationPieceTokens } = this.team.settings;
    const allowanceLeft = finalAllowance - this.finalTokens;
    const contextLeft = contextLimit - this.sequence.length;
    if (allowanceLeft <= 0 || contextLeft <= 0) {
      this.recordAnswer(null, 'final');
      return this.finish(allowanceLeft <= 0 ? 'allowance' : 'context');
    }
    const finish = await this.generatePiece(Math.min(generationPieceTokens, allowanceLeft, contextLeft), 'final');
    if (finish === null) return;
    this.lastFinish = finish;
    const parsed = parseAssistantResponse({ text: this.response.text, finish });
    if (parsed.finalAnswer !== null || finish === 'end' || finish === 'tool_call') {
      // Asked once: the response that ends (or answers) is the agent's answer; a tool call is not run.
      this.recordAnswer(parsed.finalAnswer?.answer ?? null, 'final');
      this.finish('asked');
    } else if (finish === 'context') {
      this.recordAnswer(null, 'final');
      this.finish('context');
    }
  }

  /** Requests one piece and appends it; returns how it ended, or null when the episode ended meanwhile. */
  private async generatePiece(maxNew: number, phase: 'work' | 'final'): Promise<PieceFinish | null> {
    const { settings, signal } = this.team;
    let result: GenerateResult;
    try {
      result = await this.policy.generate(this.sequence, {
        maxNew,
        stopTokenIds: this.stopTokens.stopTokenIds,
        temperature: settings.temperature,
        seed: this.sequence.samplingSeed,
        ...(settings.draws > 0 ? { draws: settings.draws } : {}),
        signal,
      });
    } catch (error) {
      if (this.team.ended) return null;
      throw error;
    }
    this.checkResult(result, maxNew);
    if (result.tokens.length === 0) return this.team.ended ? null : 'context';
    const position = this.sequence.length;
    this.sequence.appendSampled(result);
    if (phase === 'work') this.workTokens += result.tokens.length;
    else this.finalTokens += result.tokens.length;
    const finish = this.team.ended ? null : this.pieceFinish(result, phase);
    this.team.emit({
      type: 'piece',
      agent: this.name,
      phase,
      position,
      tokens: result.tokens,
      text: this.response.push(result.tokens),
      finish: finish ?? 'cancelled',
      policyVersion: result.policyVersion ?? null,
    });
    if (finish !== null) this.team.pieceFinished();
    return finish;
  }

  private checkResult(result: GenerateResult, maxNew: number): void {
    const { tokens, logprobs, finish } = result;
    const problem =
      !Array.isArray(tokens) || !tokens.every((id) => Number.isInteger(id) && id >= 0)
        ? 'tokens must be an array of non-negative integer ids'
        : tokens.length > maxNew
          ? `returned ${tokens.length} tokens, more than maxNew ${maxNew}`
          : logprobs?.length !== tokens.length
            ? `returned ${String(logprobs?.length)} log-probs for ${tokens.length} tokens`
            : finish === 'stop' && !this.stopTokens.stopTokenIds.includes(tokens[tokens.length - 1])
              ? "finished with 'stop' but the last token is not a stop token"
              : finish === 'length' && tokens.length === 0
                ? "finished with 'length' but returned no tokens"
                : finish === 'cancelled' && !this.team.signal.aborted
                  ? "returned 'cancelled' although the episode's signal was not aborted"
                  : !['stop', 'length', 'context', 'cancelled'].includes(finish)
                    ? `unknown finish ${JSON.stringify(finish)}`
                    : null;
    if (problem !== null) throw new PolicyError(`policy result for ${this.name}: ${problem}; the policy broke the Policy contract (src/policy/policy.ts)`);
  }

  private pieceFinish(result: GenerateResult, phase: 'work' | 'final'): PieceFinish {
    if (result.finish === 'stop') return result.tokens[result.tokens.length - 1] === this.stopTokens.toolCallCloseId ? 'tool_call' : 'end';
    const limit = phase === 'work' ? this.workContextLimit : this.team.settings.contextLimit;
    return result.finish === 'context' || this.sequence.length >= limit ? 'context' : 'length';
  }

  /** Runs every complete call of the response in order, then appends their outputs (and a pending notification). */
  private runCalls(parsed: ParsedResponse, finish: PieceFinish): void {
    const blocks: OutputBlock[] = [];
    const items: ContextItem[] = [];
    let reachedExit = false;
    for (const outcome of parsed.calls) {
      const callId = this.team.nextCallId();
      const name = outcome.ok ? outcome.call.name : null;
      const args = outcome.ok ? outcome.call.arguments : null;
      const execution: CallExecution = outcome.ok
        ? this.team.execute(this.index, outcome.call, callId)
        : { ok: false, output: toolErrorOutput(outcome.error), details: [] };
      this.team.emit({ type: 'tool_call', agent: this.name, callId, name, arguments: args, ok: execution.ok, output: execution.output });
      for (const detail of execution.details) this.team.emit(detail);
      if (execution.posted !== undefined) this.team.deliver(execution.posted, execution.delayPieces);
      this.notification.afterCall(execution);
      const { messages } = execution;
      if (messages === undefined) {
        blocks.push({ output: execution.output, notification: false });
        items.push({ kind: 'tool_result', callId, name, arguments: args, ok: execution.ok, output: execution.output });
      } else {
        blocks.push({ output: execution.output, notification: false, messageTexts: messages.map((message) => message.text) });
        items.push({ kind: 'tool_result', callId, name, arguments: args, ok: execution.ok, output: execution.output, messages });
      }
      if (execution.endsEpisode === true) {
        reachedExit = true;
        break;
      }
    }
    if (!reachedExit && parsed.cutCall !== null) {
      const block = this.cutBlock(parsed.cutCall);
      blocks.push(block);
      items.push({ kind: 'tool_result', callId: null, name: null, arguments: null, ok: false, output: block.output });
    }
    this.appendTurn(blocks, finish, reachedExit ? null : this.takeNotification(), items);
    if (reachedExit) this.team.end('exit');
  }

  private cutBlock(cut: CutToolCall): OutputBlock {
    this.team.emit({ type: 'cut_call', agent: this.name, text: cut.text });
    return { output: toolErrorOutput(cut.error), notification: false };
  }

  /** The pending notification's unread counts, consumed; null when none is due or nothing is unread. */
  private takeNotification(): Record<string, number> | null {
    return this.notification.take(() => this.team.unreadBySender(this.name));
  }

  /** Appends one tool-output turn; ends the work phase instead when it would not fit the context. */
  private appendTurn(blocks: OutputBlock[], after: PieceFinish, unread: Record<string, number> | null, items: ContextItem[] = []): void {
    const allBlocks = unread === null ? blocks : [...blocks, { output: notificationOutput(unread), notification: true }];
    const allItems: ContextItem[] = unread === null ? items : [...items, { kind: 'notification', unreadBySender: unread }];
    if (allBlocks.length === 0) return;
    const append = this.renderer.toolResponses({ blocks: allBlocks, after, items: allItems });
    if (this.sequence.length + append.tokens.length > this.workContextLimit) {
      this.endWork('context');
      return;
    }
    this.sequence.appendContext(append);
    this.response.reset();
    if (unread !== null) this.team.emit({ type: 'notification', agent: this.name, unreadBySender: unread });
  }

  /** The response ended without a call or answer: wait for a message (or the end of the work phase). */
  private async idleUntilWoken(cut: CutToolCall | null): Promise<void> {
    this.team.emit({ type: 'idle', agent: this.name });
    for (;;) {
      const unread = this.takeNotification();
      if (unread !== null) {
        this.team.emit({ type: 'wake', agent: this.name });
        return this.appendTurn(cut === null ? [] : [this.cutBlock(cut)], this.lastFinish, unread);
      }
      const woken = new Promise<WakeReason>((resolve) => {
        this.wake = resolve;
      });
      this.idle = true;
      this.team.checkAllIdle();
      const reason = await woken;
      if (reason === 'final') return this.endWork('all_idle');
      if (reason === 'done') return this.finish('all_idle');
      if (reason === 'end') return;
    }
  }

  /** The work phase is over: ask for the final answer when the task takes one, else the agent is done. */
  private endWork(reason: PhaseReason): void {
    if (!this.team.takesAnswer || this.answer !== null) return this.finish(reason);
    const text = this.team.finalPrompt(this.index) as string;
    const append = this.renderer.finalPrompt({ item: { kind: 'final_prompt', text }, after: this.lastFinish });
    if (this.sequence.length + append.tokens.length >= this.team.settings.contextLimit) {
      this.recordAnswer(null, 'final');
      return this.finish('context');
    }
    this.team.emit({ type: 'phase', agent: this.name, phase: 'final', reason });
    this.sequence.appendContext(append);
    this.response.reset();
    this.phase = 'final';
    this.team.checkAllIdle();
  }

  private finish(reason: PhaseReason): void {
    this.phase = 'done';
    this.idle = false;
    this.team.emit({ type: 'phase', agent: this.name, phase: 'done', reason });
    this.team.checkAllIdle();
  }

  private recordAnswer(answer: string | null, phase: 'work' | 'final'): void {
    const correct = answer !== null && this.team.gradeAnswer({ agentIndex: this.index, text: `#### ${answer}` });
    if (answer !== null) this.answer = answer;
    this.team.emit({ type: 'final_answer', agent: this.name, phase, answer, correct });
  }
}
