// Scripted demonstrations for supervised fine-tuning (Appendix L): whole episodes of the task's
// scripted demonstrator (Task.demonstrator: the aggregators, or the depth-first explorers on depth-2
// trees), run through the same harness, chat format and tokenizer as a model, so every agent history
// is a training sequence whose sampled tokens are the targets. Team variant: N agents with messaging; solo variant: single
// agents without messaging.
import type { EpisodeSettingsOverrides } from '../harness/episode-settings.js';
import { runEpisode } from '../harness/run-episode.js';
import type { AgentSequence } from '../policy/agent-sequence.js';
import { openPolicy } from '../policy/open-policy.js';
import { loadTask, type Task, type TaskProblem } from '../tasks/index.js';
import { ConfigError } from '../errors.js';

/** Options of scriptedDemonstrations. */
export interface DemonstrationOptions {
  /** The training task (or a built-in task's name or a task module's path): its demonstrator runs on its demonstration task (exploration: depth-2 trees, Table 3). */
  readonly task: Task | string;
  /** The tokenizer.json the scripted agents write with (the model's). */
  readonly tokenizerPath: string;
  /** Team sizes to demonstrate; 1 gives the solo variant. */
  readonly teamSizes: readonly number[];
  /** Episodes per team size. */
  readonly episodesPerSize: number;
  /** Messaging on for teams of more than one (solo episodes never have it). */
  readonly communication: boolean;
  /** Seeds every episode (names, teammate orders, door orders). */
  readonly seed: string;
  /** Episode settings (allowances, context, prompt style) as in training. */
  readonly settings: EpisodeSettingsOverrides;
  /** Folder of the split files. */
  readonly dataDir?: string;
}

/** What scriptedDemonstrations produced. */
export interface Demonstrations {
  /** Every agent history of every solved episode, in episode order. */
  readonly sequences: AgentSequence[];
  /** Episodes run. */
  readonly episodes: number;
  /** Episodes the script solved (the only ones kept). */
  readonly successes: number;
}

/** Runs scripted episodes on the task's training problems (cycling through them) and returns their agent histories. */
export async function scriptedDemonstrations(options: DemonstrationOptions): Promise<Demonstrations> {
  const trained = typeof options.task === 'string' ? await loadTask(options.task) : options.task;
  const demonstrator = trained.demonstrator;
  if (demonstrator === undefined) throw new ConfigError(`no scripted demonstrations for task "${trained.name}": it has no demonstrator (Task.demonstrator); set sft to null.`);
  const task = demonstrator.demonstrationTask ?? trained;
  const { policy } = openPolicy({ kind: 'scripted', script: demonstrator.script, description: demonstrator.description, tokenizerPath: options.tokenizerPath });
  const problems: readonly TaskProblem[] = await task.loadProblems({ split: 'train', ...(options.dataDir === undefined ? {} : { dataDir: options.dataDir }) });
  const sequences: AgentSequence[] = [];
  let episodes = 0;
  let successes = 0;
  for (const n of options.teamSizes) {
    const runs = Array.from({ length: options.episodesPerSize }, (_, index) =>
      runEpisode({
        ...options.settings,
        task,
        problem: problems[index % problems.length],
        n,
        policy,
        seed: `${options.seed}/demo/${n}/${index}`,
        communication: options.communication && n > 1,
      }),
    );
    for (const result of await Promise.all(runs)) {
      episodes += 1;
      // Appendix L: only episodes the scripted team solved are kept.
      if (!result.teamSuccess) continue;
      successes += 1;
      for (const agent of result.agents) if (agent.sequence.sampledCount > 0) sequences.push(agent.sequence);
    }
  }
  return { sequences, episodes, successes };
}
