// distributed/rank-environment.ts: torchrun's and Slurm's variables give the rank, the world and
// rank 0's address; a world of one or no variables is a single process; wrong values are refused
// naming the variable; each rank's GPU is the LOCAL_RANK-th visible one.
import { describe, expect, it } from 'vitest';
import { DEFAULT_MASTER_PORT, firstSlurmHost, readRankEnvironment, visibleDeviceForRank } from '../../src/distributed/rank-environment.js';

describe('readRankEnvironment', () => {
  it('reads torchrun-style variables', () => {
    expect(readRankEnvironment({ RANK: '3', WORLD_SIZE: '4', LOCAL_RANK: '1', MASTER_ADDR: 'node7', MASTER_PORT: '29511' })).toEqual({
      rank: 3, worldSize: 4, localRank: 1, masterAddr: 'node7', masterPort: 29511, rendezvousPort: 29511, launcher: 'torchrun',
    });
    // torchrun's agent holds MASTER_PORT for its store: the rendezvous takes the next port, or S3_RENDEZVOUS_PORT.
    const agent = { RANK: '0', WORLD_SIZE: '2', MASTER_ADDR: 'h', MASTER_PORT: '29500', TORCHELASTIC_USE_AGENT_STORE: 'True' };
    expect(readRankEnvironment(agent)?.rendezvousPort).toBe(29501);
    expect(readRankEnvironment({ ...agent, S3_RENDEZVOUS_PORT: '31000' })?.rendezvousPort).toBe(31000);
    expect(readRankEnvironment({ RANK: '0', WORLD_SIZE: '2', MASTER_ADDR: 'h' })?.masterPort).toBe(DEFAULT_MASTER_PORT);
  });

  it('reads Slurm variables, rank 0 on the first node of the list', () => {
    expect(readRankEnvironment({ SLURM_PROCID: '5', SLURM_NTASKS: '8', SLURM_LOCALID: '1', SLURM_JOB_NODELIST: 'gpu[07-08,12]' })).toEqual({
      rank: 5, worldSize: 8, localRank: 1, masterAddr: 'gpu07', masterPort: DEFAULT_MASTER_PORT, rendezvousPort: DEFAULT_MASTER_PORT, launcher: 'slurm',
    });
    expect(firstSlurmHost('a1,b2')).toBe('a1');
    expect(firstSlurmHost('node[3]')).toBe('node3');
    expect(() => firstSlurmHost('[1-2]')).toThrow(/Slurm node list/);
  });

  it('is a single process with no variables or a world of one', () => {
    expect(readRankEnvironment({})).toBeNull();
    expect(readRankEnvironment({ RANK: '0', WORLD_SIZE: '1' })).toBeNull();
    expect(readRankEnvironment({ SLURM_PROCID: '0', SLURM_NTASKS: '1' })).toBeNull();
  });

  it('refuses wrong values naming the variable', () => {
    expect(() => readRankEnvironment({ RANK: 'x', WORLD_SIZE: '2', MASTER_ADDR: 'h' })).toThrow(/RANK must be an integer/);
    expect(() => readRankEnvironment({ RANK: '2', WORLD_SIZE: '2', MASTER_ADDR: 'h' })).toThrow(/RANK=2 must be below WORLD_SIZE=2/);
    expect(() => readRankEnvironment({ RANK: '1', WORLD_SIZE: '2' })).toThrow(/MASTER_ADDR/);
    expect(() => readRankEnvironment({ RANK: '1', WORLD_SIZE: '2', MASTER_ADDR: 'h', MASTER_PORT: '70000' })).toThrow(/MASTER_PORT must be a port/);
    expect(() => readRankEnvironment({ SLURM_PROCID: '1', SLURM_NTASKS: '2' })).toThrow(/SLURM_JOB_NODELIST/);
  });
});

describe('visibleDeviceForRank', () => {
  it('picks the local rank-th visible GPU', () => {
    expect(visibleDeviceForRank(1, {})).toBe('1');
    expect(visibleDeviceForRank(1, { CUDA_VISIBLE_DEVICES: '4,6' })).toBe('6');
    expect(() => visibleDeviceForRank(2, { CUDA_VISIBLE_DEVICES: '4,6' })).toThrow(/local rank 2 has no GPU/);
    expect(visibleDeviceForRank(3, { CUDA_VISIBLE_DEVICES: '5' })).toBe('5'); // a task bound to its one GPU
  });
});
