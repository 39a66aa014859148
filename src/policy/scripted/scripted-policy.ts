// A Policy that runs a script instead of a model. Each agent's script instance is built from the
// harness's structured prompt item and fed every context item the harness appends (tool results,
// notifications, the final prompt); it reads nothing else (no tree, no teammate state). Its chosen
// action is rendered as model text and tokenized with the policy's tokenizer, so a scripted agent
// spends tokens against its allowance exactly like a model; with thinking off (the prompt item says
// so) the text leaves out the reasoning block the generation prompt already holds.
//
// Pieces. An action longer than maxNew is returned in pieces of maxNew tokens (finish 'length') and
// continued on the next call. If the harness appended context in between (a notification closed the
// turn), the rest of the action is dropped and the script decides again from its updated state.
//
// Log-probs. A script is deterministic: every token has probability 1 under it, so every log-prob is
// 0 and no draws are returned. Randomness (door orders) comes from an Rng seeded with the agent's
// sampling seed, so a seed reproduces the agent exactly.

import { createRng, type Rng } from '../../common/random.js';
import { ConfigError } from '../../errors.js';
import type { Tokenizer } from '../../model/tokenizer/tokenizer.js';
import type { AgentSequence } from '../agent-sequence.js';
import type { ContextItem, PromptItem } from '../context-item.js';
import type { GenerateOptions, GenerateResult, Policy } from '../policy.js';
import { StretchEncoder } from '../stretch-encoder.js';
import { renderAction, type ScriptedAction } from './scripted-action.js';

/** One scripted agent: fed every new context item in order, then asked what to do next. */
export interface ScriptedAgent {
  /** Updates the agent's state with an item the harness appended (the prompt is given to Script.start). */
  observe(item: ContextItem): void;
  /** The next action given everything observed; must not consume randomness (it may be asked again). */
  decide(): ScriptedAction;
}

/** Options of Script.start. */
export interface ScriptStartOptions {
  /** The agent's opening prompt. */
  readonly prompt: PromptItem;
  /** The agent's own random stream. */
  readonly rng: Rng;
}

/** A kind of scripted agent. */
export interface Script {
  /** Names the script in seeds and errors. */
  readonly name: string;
  /** Builds one agent's script instance from its prompt. */
  start(options: ScriptStartOptions): ScriptedAgent;
}

/** Options of ScriptedPolicy. */
export interface ScriptedPolicyOptions {
  /** The tokenizer actions are encoded with. */
  readonly tokenizer: Tokenizer;
  /** The script every agent runs. */
  readonly script: Script;
}

interface AgentRun {
  readonly agent: ScriptedAgent;
  /** The prompt's thinking mode: off drops the reasoning block the generation prompt already holds. */
  readonly thinking: boolean;
  /** Context items already fed to the agent. */
  cursor: number;
  /** Tokens of the action being emitted, and how many were returned so far. */
  pending: readonly number[] | null;
  offset: number;
}

// Stretches of action text recur (reads, idles, answers, the same room for teammates).
const MAX_CACHED_STRETCHES = 50_000;

/** A log-prob array of zeros per length, shared: every scripted token has probability 1. */
const zeroLogprobs = new Map<number, readonly number[]>();

function zeros(length: number): readonly number[] {
  let array = zeroLogprobs.get(length);
  if (array === undefined) {
    array = Object.freeze(new Array<number>(length).fill(0));
    zeroLogprobs.set(length, array);
  }
  return array;
}

/** Runs a script as a policy; see the file header for pieces and log-probs. */
export class ScriptedPolicy implements Policy {
  /** The tokenizer actions are encoded with. */
  readonly tokenizer: Tokenizer;
  private readonly script: Script;
  private readonly runs = new WeakMap<AgentSequence, AgentRun>();
  private readonly encoder: StretchEncoder;

  /** A policy running `script` for every agent. */
  constructor(options: ScriptedPolicyOptions) {
    this.tokenizer = options.tokenizer;
    this.script = options.script;
    this.encoder = new StretchEncoder({ tokenizer: options.tokenizer, maxCachedStretches: MAX_CACHED_STRETCHES });
  }

  /** Emits the next piece of the agent's current action (synchronously; the promise is already settled). */
  generate(sequence: AgentSequence, options: GenerateOptions): Promise<GenerateResult> {
    try {
      return Promise.resolve(this.step(sequence, options));
    } catch (error) {
      return Promise.reject(error);
    }
  }

  /** Forgets the agent's script state. */
  release(sequence: AgentSequence): void {
    this.runs.delete(sequence);
  }

  private step(sequence: AgentSequence, options: GenerateOptions): GenerateResult {
    if (options.signal?.aborted === true) return { tokens: [], logprobs: [], finish: 'cancelled' };
    const run = this.runFor(sequence, options.seed);
    if (run.cursor < sequence.context.length) {
      for (; run.cursor < sequence.context.length; run.cursor += 1) run.agent.observe(sequence.context[run.cursor]);
      run.pending = null;
    }
    if (run.pending === null) {
      run.pending = this.encoder.encode(renderAction(run.agent.decide(), run.thinking));
      run.offset = 0;
    }
    const pending = run.pending;
    const limit = Math.min(pending.length, run.offset + options.maxNew);
    let end = limit;
    for (let i = run.offset; i < limit; i += 1) {
      if (options.stopTokenIds.includes(pending[i])) {
        end = i + 1;
        break;
      }
    }
    const tokens = run.offset === 0 && end === pending.length ? pending : pending.slice(run.offset, end);
    const stopped = options.stopTokenIds.includes(tokens[tokens.length - 1]);
    if (stopped || end === pending.length) run.pending = null;
    else run.offset = end;
    return { tokens, logprobs: zeros(tokens.length), finish: stopped ? 'stop' : 'length' };
  }

  private runFor(sequence: AgentSequence, seed: bigint | number): AgentRun {
    let run = this.runs.get(sequence);
    if (run !== undefined) return run;
    const prompt = sequence.context[0];
    if (prompt === undefined || prompt.kind !== 'prompt') {
      throw new ConfigError(
        `scripted policy "${this.script.name}": sequence of ${sequence.agentName} has no prompt item; ` +
          'scripted policies run only on sequences built by the harness (src/harness), which records structured context',
      );
    }
    const rng = createRng(`${this.script.name}/${String(seed)}`);
    run = { agent: this.script.start({ prompt, rng }), thinking: prompt.thinking !== false, cursor: 1, pending: null, offset: 0 };
    this.runs.set(sequence, run);
    return run;
  }
}
