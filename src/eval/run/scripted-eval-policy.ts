// The scripted policies `swarm eval --policy scripted` evaluates: the scripted aggregation agents and
// the Appendix L explorers, writing through a tokenizer so they spend tokens like a model. The default
// tokenizer is the built-in s3-mini tokenizer (shipped in the package); any tokenizer.json, such as a
// Qwen3 checkpoint's, can be given instead.

import { resolve } from 'node:path';
import { ConfigError } from '../../errors.js';
import { builtinTokenizerPath } from '../../model/s3-mini-tokenizer.js';
import { Tokenizer } from '../../model/tokenizer/index.js';
import { aggregatorScript, explorerScript, ScriptedPolicy, type Policy, type Script } from '../../policy/index.js';
import type { SummaryPolicy } from '../summary.js';

const AGGREGATORS = {
  script: aggregatorScript,
  description: 'scripted aggregation agents: broadcast their own number once, answer when every teammate is heard',
};
const EXPLORERS = {
  script: explorerScript,
  description: 'scripted explorers of Appendix L: depth-first search with branch claims and exhausted reports',
};

const SCRIPTS: Readonly<Record<string, { script: Script; description: string }>> = {
  aggregation: AGGREGATORS,
  'aggregation-digits': AGGREGATORS,
  exploration: EXPLORERS,
  'exploration-d2': EXPLORERS,
};

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
  /** Task name; picks the script. */
  readonly task: string;
  /** tokenizer.json to write with; default: the built-in s3-mini tokenizer. */
  readonly tokenizerPath?: string;
}

/** The scripted policy of a task with its summary description. */
export function scriptedEvalPolicy(options: ScriptedEvalPolicyOptions): EvalPolicy {
  const entry = SCRIPTS[options.task];
  if (entry === undefined) {
    throw new ConfigError(`No scripted policy exists for task "${options.task}"; expected one of: ${Object.keys(SCRIPTS).join(', ')}.`);
  }
  const tokenizerPath = resolve(options.tokenizerPath ?? builtinTokenizerPath());
  const tokenizer = Tokenizer.fromFile(tokenizerPath);
  const tokenizerName = options.tokenizerPath === undefined ? 'the built-in s3-mini tokenizer' : `the tokenizer ${tokenizerPath}`;
  return {
    policy: new ScriptedPolicy({ tokenizer, script: entry.script }),
    info: { name: 'scripted', description: `${entry.description}; writing with ${tokenizerName}`, model: null },
    key: `scripted:${entry.script.name}:${tokenizerPath}`,
  };
}
