// The EpisodeView a task metric measures (tasks/task.ts), built from one episode of a trace: its
// messages with the reads of each, the task's tool events and the final answers, every entry carrying
// its position in the episode's event order.

import type { EpisodeTrace } from '../../harness/trace.js';
import type { EpisodeView, EpisodeViewMessage, TaskEvent } from '../../tasks/index.js';

/** The view of one traced episode that TaskMetric.measure receives. */
export function episodeViewOf(episode: EpisodeTrace): EpisodeView {
  const messages: (EpisodeViewMessage & { reads: { agent: string; at: number }[] })[] = [];
  const byId = new Map<number, (typeof messages)[number]>();
  const taskEvents: { agent: string; event: TaskEvent; at: number }[] = [];
  const answers: { agent: string; answer: string | null; correct: boolean; at: number }[] = [];
  episode.events.forEach((event, at) => {
    if (event.type === 'message') {
      const message = { id: event.messageId, from: event.agent, recipients: event.recipients, text: event.text, deliveredText: event.deliveredText ?? event.text, at, reads: [] };
      messages.push(message);
      byId.set(event.messageId, message);
    } else if (event.type === 'read') {
      for (const id of event.messageIds) byId.get(id)?.reads.push({ agent: event.agent, at });
    } else if (event.type === 'task_event') {
      taskEvents.push({ agent: event.agent, event: event.event, at });
    } else if (event.type === 'final_answer') {
      answers.push({ agent: event.agent, answer: event.answer, correct: event.correct, at });
    }
  });
  return {
    agentNames: episode.start.agentNames,
    communication: episode.start.communication,
    messages,
    taskEvents,
    answers,
    agentSuccess: episode.end.agentSuccess,
    teamSuccess: episode.end.teamSuccess,
    totalTokens: episode.end.totalTokens,
  };
}
