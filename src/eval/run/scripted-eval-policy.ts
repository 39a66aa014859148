// The scripted policy `swarm eval --policy scripted` evaluates: the task's own demonstrator
// (Task.demonstrator: the aggregation agents, the Appendix L explorers, a plugin task's script),
// writing through a tokenizer so it spends tokens like a model. The default
// tokenizer is the built-in s3-mini tokenizer (shipped in the package); any tokenizer.json, such as a
// Qwen3 checkpoint's, can be given instead.

import { resolve } from 'node:path';
import { ConfigError } from '../../errors.js';
import { builtinTokenizerPath } from '../../model/s3-mini-tokenizer.js';
import { Tokenizer } from '../../model/tokenizer/index.js';
import { ScriptedPolicy, type Policy } from '../../policy/index.js';
import { getTask, type Task } from '../../tasks/index.js';
import type { SummaryPolicy } from '../summary.js';

/** A policy ready to evaluate, with how the summary and the manifest name it. */
export interface EvalPolicy {
  /** The policy every agent generates with. */
  readonly policy: Policy;
  /** Name, description and model of summary.json. */
  readonly info: SummaryPolicy;
  /** Exactly what generated the tokens (compared when an evaluation is resumed). */
  readonly key: string;
  /** Frees what the policy holds (the inference engine of a model), after the evaluation. */
  close?(): void;
}

/** Options of scriptedEvalPolicy. */
export interface ScriptedEvalPolicyOptions {
  /** The task (or a registered task's name); its demonstrator is the script. */
  readonly task: Task | string;
  /** tokenizer.json to write with; default: the built-in s3-mini tokenizer. */
  readonly tokenizerPath?: string;
}

/** The scripted policy of a task with its summary description. */
export function scriptedEvalPolicy(options: ScriptedEvalPolicyOptions): EvalPolicy {
  const task = typeof options.task === 'string' ? getTask(options.task) : options.task;
  const entry = task.demonstrator;
  if (entry === undefined) throw new ConfigError(`Task "${task.name}" has no scripted demonstrator (Task.demonstrator); evaluate a model with --model DIR instead.`);
  const tokenizerPath = resolve(options.tokenizerPath ?? builtinTokenizerPath());
  const tokenizer = Tokenizer.fromFile(tokenizerPath);
  const tokenizerName = options.tokenizerPath === undefined ? 'the built-in s3-mini tokenizer' : `the tokenizer ${tokenizerPath}`;
  return {
    policy: new ScriptedPolicy({ tokenizer, script: entry.script }),
    info: { name: 'scripted', description: `${entry.description}; writing with ${tokenizerName}`, model: null },
    key: `scripted:${entry.script.name}:${tokenizerPath}`,
  };
}
