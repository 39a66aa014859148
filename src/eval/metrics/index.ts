// The metrics layer's public surface: per-episode metrics from traces (Appendix M, K analyses) and
// their aggregation into one team size's entry of summary.json.

export { communicationStructureOf } from './communication-structure.js';
export { measureEpisode, type EpisodeMetrics, type MeasureEpisodeOptions } from './episode-metrics.js';
export { branchMentions, claimCountsOf, type BranchMention, type ClaimCounts, type ClaimCountsOptions } from './explorer-claims.js';
export { gini, messageCountsOf, type MessageCounts } from './message-counts.js';
export { centralization, messageGraphOf, reciprocity, type EpisodeMessageGraph } from './message-graph.js';
export { numberSharingOf, type NumberSharing, type NumberSharingOptions } from './number-sharing.js';
export { readBeforeFirstSendShareOf } from './read-before-send.js';
export { roomOverlapOf } from './room-overlap.js';
export { summarizeSize, type SummarizeSizeOptions } from './size-summary.js';
export { statedNumbers } from './stated-numbers.js';
