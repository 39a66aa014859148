// distributed/rendezvous.ts with stand-in ranks in this process: every rank gets the session and
// every address once all have joined; a rank that never joins fails the rendezvous naming it;
// commands reach their rank in order and answers (and errors) come back naming it; a rank whose
// command stream closes fails its pending command at once; an unanswered command times out naming
// the rank and the command; a second join of a rank and a wrong world size are refused.
import http from 'node:http';
import { afterEach, describe, expect, it } from 'vitest';
import { joinRendezvous, RendezvousServer, serveRendezvousCommands, type RankCommand } from '../../src/distributed/rendezvous.js';

let servers: RendezvousServer<unknown>[] = [];
afterEach(async () => {
  await Promise.all(servers.map((s) => s.close()));
  servers = [];
});

async function start(worldSize: number, timeoutMs = 5000): Promise<{ server: RendezvousServer<{ kind: string }>; url: string }> {
  const server = new RendezvousServer({ worldSize, session: { kind: 'host' }, self: { host: '127.0.0.1', port: 1000 }, timeoutMs });
  servers.push(server as RendezvousServer<unknown>);
  const port = await server.listen('127.0.0.1', 0);
  return { server, url: `http://127.0.0.1:${port}` };
}

describe('RendezvousServer', () => {
  it('answers every rank with the session and all addresses once all have joined', async () => {
    const { server, url } = await start(3);
    const joined = server.membersJoined();
    const answers = await Promise.all([1, 2].map((rank) => joinRendezvous(url, { rank, worldSize: 3, ring: { port: 2000 + rank } }, 5000)));
    const members = [{ host: '127.0.0.1', port: 1000 }, { host: '127.0.0.1', port: 2001 }, { host: '127.0.0.1', port: 2002 }];
    expect(await joined).toEqual(members);
    for (const answer of answers) expect(answer).toEqual({ session: { kind: 'host' }, members });
  });

  it('fails naming the ranks that did not join in time', async () => {
    const { server, url } = await start(3, 300);
    const joined = server.membersJoined();
    const one = joinRendezvous(url, { rank: 1, worldSize: 3, ring: { port: 1 } }, 5000);
    await expect(joined).rejects.toThrow(/trainer rank 2 did not join the rendezvous within 300 ms/);
    await expect(one).rejects.toThrow(/refused rank 1: trainer rank 2 did not join/);
  });

  it('refuses a rank that joins twice and a wrong world size', async () => {
    const { url } = await start(3);
    void joinRendezvous(url, { rank: 1, worldSize: 3, ring: { port: 1 } }, 5000).catch(() => undefined);
    await new Promise((resolve) => setTimeout(resolve, 100));
    await expect(joinRendezvous(url, { rank: 1, worldSize: 3, ring: { port: 1 } }, 5000)).rejects.toThrow(/rank 1 has already joined/);
    await expect(joinRendezvous(url, { rank: 2, worldSize: 4, ring: { port: 1 } }, 5000)).rejects.toThrow(/world size 4, but this group has 3 ranks/);
  });

  it('retries while rank 0 is not listening yet', async () => {
    const probe = http.createServer();
    await new Promise<void>((resolve) => probe.listen(0, '127.0.0.1', () => resolve()));
    const port = (probe.address() as { port: number }).port;
    await new Promise<void>((resolve) => probe.close(() => resolve()));
    const joining = joinRendezvous(`http://127.0.0.1:${port}`, { rank: 1, worldSize: 2, ring: { port: 1 } }, 5000);
    await new Promise((resolve) => setTimeout(resolve, 500));
    const server = new RendezvousServer({ worldSize: 2, session: 's', self: { host: '127.0.0.1', port: 1 }, timeoutMs: 5000 });
    servers.push(server);
    await server.listen('127.0.0.1', port);
    expect((await joining).session).toBe('s');
  });
});

describe('rendezvous commands', () => {
  it('runs commands in order on their rank and brings answers and errors back naming it', async () => {
    const { server, url } = await start(2);
    await joinRendezvous(url, { rank: 1, worldSize: 2, ring: { port: 1 } }, 5000);
    const seen: string[] = [];
    const serving = serveRendezvousCommands(url, 1, async (command: RankCommand) => {
      seen.push(command.op);
      if (command.op === 'fail') throw new Error('no such thing');
      await new Promise((resolve) => setTimeout(resolve, command.op === 'slow' ? 50 : 0));
      return { echo: command.args };
    });
    const [slow, fast] = await Promise.all([server.call(1, 'slow', 1), server.call(1, 'fast', 2)]);
    expect([slow, fast]).toEqual([{ echo: 1 }, { echo: 2 }]);
    await expect(server.call(1, 'fail')).rejects.toThrow('trainer rank 1: fail failed: no such thing');
    expect(seen).toEqual(['slow', 'fast', 'fail']);
    await server.close();
    await serving; // rank 0 ending the stream ends the rank
  });

  it('fails a pending command at once when its rank stops, and times out one never answered', async () => {
    const { server, url } = await start(2, 400);
    await joinRendezvous(url, { rank: 1, worldSize: 2, ring: { port: 1 } }, 5000);
    let streamRequest: http.ClientRequest | null = null;
    await new Promise<void>((resolve) => {
      streamRequest = http.get(`${url}/rendezvous/commands?rank=1`, () => resolve());
    });
    await expect(server.call(1, 'never')).rejects.toThrow('trainer rank 1 did not answer never within 400 ms');
    const started = Date.now();
    const pending = server.call(1, 'step', undefined, 60_000);
    (streamRequest as unknown as http.ClientRequest).destroy();
    await expect(pending).rejects.toThrow(/trainer rank 1 disconnected from the rendezvous \(it stopped\); step did not finish/);
    expect(Date.now() - started).toBeLessThan(5000);
    await expect(server.call(1, 'later')).rejects.toThrow(/cannot send it later/);
  });
});
