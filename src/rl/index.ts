// The RL layer's building blocks of Algorithm 1: rewards, advantages, loss units per learner and the Trainer's per-token coefficients.
export * from './token-cost.js';
export * from './team-reward.js';
export * from './group-advantage.js';
export * from './loss-unit.js';
export * from './team-loss-units.js';
export * from './individual-reward.js';
export * from './online-sft.js';
export * from './train-sequences.js';
