// The rendezvous of a data-parallel trainer group, over HTTP, served by rank 0 (the orchestrating
// swarm process; no Python, no store): every other rank POSTs /rendezvous/join with its rank and its
// host ring address and is answered, once all have joined, with the group's session (the collective
// kind, rank 0's NCCL id) and every rank's address. Rank 0 then drives the others through one
// long-lived GET /rendezvous/commands stream per rank (one JSON command per line; a command's bulk
// data, when it has any, is fetched as bytes from GET /rendezvous/payload) and they answer on
// POST /rendezvous/results. Every wait has a deadline: ranks that do not join in time fail the
// rendezvous naming them, a command not answered in time fails naming the rank and the command, and a
// rank whose command stream closes (it stopped) fails its pending commands at once.
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { DistributedError } from '../errors.js';

/** Where a rank's host ring listens. */
export interface RingAddress {
  host: string;
  port: number;
}

/** What every rank receives once all have joined. */
export interface RendezvousAnswer<Session> {
  session: Session;
  members: RingAddress[];
}

/** A command rank 0 sends a rank, and what comes back. */
export interface RankCommand {
  id: number;
  op: string;
  args?: unknown;
  /** The command has bytes to fetch (given to the handler as its second argument). */
  payload?: boolean;
}
interface RankResult {
  rank: number;
  id: number;
  ok: boolean;
  value?: unknown;
  error?: string;
}

function readBody(request: http.IncomingMessage, limit = 1 << 30): Promise<string> {
  return new Promise((resolve, reject) => {
    let size = 0;
    const chunks: Buffer[] = [];
    request.on('data', (chunk: Buffer) => {
      size += chunk.length;
      if (size > limit) reject(new DistributedError('request body too large'));
      else chunks.push(chunk);
    });
    request.on('end', () => resolve(Buffer.concat(chunks).toString('utf8')));
    request.on('error', reject);
  });
}

function reply(response: http.ServerResponse, status: number, body: unknown): void {
  if (response.headersSent) return;
  response.writeHead(status, { 'content-type': 'application/json' });
  response.end(JSON.stringify(body));
}

interface Pending {
  resolve: (value: unknown) => void;
  reject: (error: Error) => void;
  timer: NodeJS.Timeout;
  op: string;
}

/** Rank 0's side: the HTTP server every other rank joins and takes commands from. */
export class RendezvousServer<Session> {
  private server: http.Server | null = null;
  private readonly members: (RingAddress | null)[];
  private readonly waiting: http.ServerResponse[] = [];
  private readonly streams = new Map<number, http.ServerResponse>();
  private readonly streamWaiters = new Map<number, ((stream: http.ServerResponse) => void)[]>();
  private readonly pending = new Map<number, Map<number, Pending>>();
  private readonly lost = new Map<number, string>();
  private readonly payloads = new Map<string, Buffer>();
  private nextId = 1;
  private joined!: Promise<RingAddress[]>;
  private settleJoined!: { resolve: (members: RingAddress[]) => void; reject: (error: Error) => void };
  private closed = false;

  constructor(
    private readonly options: {
      worldSize: number;
      session: Session;
      /** Rank 0's own host ring address. */
      self: RingAddress;
      /** How long the others have to join, and to answer each command. */
      timeoutMs: number;
    },
  ) {
    this.members = Array.from({ length: options.worldSize }, (_, rank) => (rank === 0 ? options.self : null));
    this.joined = new Promise((resolve, reject) => (this.settleJoined = { resolve, reject }));
    this.joined.catch(() => undefined);
  }

  /** Starts listening on host:port (port 0: any free one); resolves with the port. */
  async listen(host: string, port: number): Promise<number> {
    const server = http.createServer((request, response) => {
      this.handle(request, response).catch((error: Error) => reply(response, 500, { error: error.message }));
    });
    server.requestTimeout = 0;
    this.server = server;
    await new Promise<void>((resolve, reject) => {
      server.once('error', (error: NodeJS.ErrnoException) =>
        reject(new DistributedError(`the trainer rendezvous cannot listen on ${host}:${port}: ${error.message}${error.code === 'EADDRINUSE' ? ' (set MASTER_PORT to a free port)' : ''}`)),
      );
      server.listen(port, host, () => resolve());
    });
    return (server.address() as AddressInfo).port;
  }

  /** Every rank's ring address, once all have joined (rejects after the timeout, naming the ranks missing). */
  membersJoined(): Promise<RingAddress[]> {
    const timer = setTimeout(() => {
      const missing = this.members.flatMap((m, rank) => (m === null ? [rank] : []));
      if (missing.length > 0) this.failJoin(new DistributedError(`trainer rank${missing.length > 1 ? 's' : ''} ${missing.join(', ')} did not join the rendezvous within ${this.options.timeoutMs} ms`));
    }, this.options.timeoutMs);
    timer.unref();
    return this.joined.finally(() => clearTimeout(timer));
  }

  private failJoin(error: Error): void {
    this.settleJoined.reject(error);
    for (const response of this.waiting.splice(0)) reply(response, 504, { error: error.message });
  }

  private async handle(request: http.IncomingMessage, response: http.ServerResponse): Promise<void> {
    const url = new URL(request.url ?? '/', 'http://rendezvous');
    if (request.method === 'POST' && url.pathname === '/rendezvous/join') return this.join(request, response);
    if (request.method === 'GET' && url.pathname === '/rendezvous/commands') return this.stream(Number(url.searchParams.get('rank')), response);
    if (request.method === 'POST' && url.pathname === '/rendezvous/results') return this.result(request, response);
    if (request.method === 'GET' && url.pathname === '/rendezvous/payload') return this.payload(`${url.searchParams.get('rank')}/${url.searchParams.get('id')}`, response);
    reply(response, 404, { error: `no such rendezvous endpoint: ${request.method} ${url.pathname}` });
  }

  private async join(request: http.IncomingMessage, response: http.ServerResponse): Promise<void> {
    let body: { rank?: unknown; worldSize?: unknown; ring?: { host?: unknown; port?: unknown } };
    try {
      body = JSON.parse(await readBody(request, 1 << 16)) as typeof body;
    } catch {
      return reply(response, 400, { error: 'join: the body must be JSON {rank, worldSize, ring: {port, host?}}' });
    }
    const { rank, worldSize, ring } = body;
    if (worldSize !== this.options.worldSize) return reply(response, 400, { error: `join: world size ${String(worldSize)}, but this group has ${this.options.worldSize} ranks` });
    if (typeof rank !== 'number' || !Number.isInteger(rank) || rank < 1 || rank >= this.options.worldSize) {
      return reply(response, 400, { error: `join: rank ${String(rank)} (want an integer 1–${this.options.worldSize - 1}; rank 0 serves the rendezvous)` });
    }
    if (typeof ring?.port !== 'number') return reply(response, 400, { error: 'join: ring.port must be a number' });
    if (this.members[rank] !== null) return reply(response, 409, { error: `join: rank ${rank} has already joined` });
    const remote = (request.socket.remoteAddress ?? '127.0.0.1').replace(/^::ffff:/, '');
    this.members[rank] = { host: typeof ring.host === 'string' && ring.host !== '' ? ring.host : remote, port: ring.port };
    this.waiting.push(response);
    if (this.members.every((m) => m !== null)) {
      const members = this.members as RingAddress[];
      const answer: RendezvousAnswer<Session> = { session: this.options.session, members };
      for (const waiting of this.waiting.splice(0)) reply(waiting, 200, answer);
      this.settleJoined.resolve(members);
    }
  }

  private stream(rank: number, response: http.ServerResponse): void {
    if (!Number.isInteger(rank) || rank < 1 || rank >= this.options.worldSize || this.members[rank] === null) {
      return reply(response, 400, { error: `commands: rank ${rank} has not joined` });
    }
    if (this.streams.has(rank)) return reply(response, 409, { error: `commands: rank ${rank} already has a command stream` });
    response.writeHead(200, { 'content-type': 'application/x-ndjson' });
    response.flushHeaders();
    this.streams.set(rank, response);
    response.on('close', () => this.rankLost(rank, `trainer rank ${rank} disconnected from the rendezvous (it stopped)`));
    for (const waiter of this.streamWaiters.get(rank) ?? []) waiter(response);
    this.streamWaiters.delete(rank);
  }

  private payload(key: string, response: http.ServerResponse): void {
    const bytes = this.payloads.get(key);
    if (bytes === undefined) return reply(response, 404, { error: `payload: no command ${key} (rank/id) has bytes waiting` });
    this.payloads.delete(key);
    response.writeHead(200, { 'content-type': 'application/octet-stream', 'content-length': String(bytes.length) });
    response.end(bytes);
  }

  private async result(request: http.IncomingMessage, response: http.ServerResponse): Promise<void> {
    let result: RankResult;
    try {
      result = JSON.parse(await readBody(request)) as RankResult;
    } catch {
      return reply(response, 400, { error: 'results: the body must be JSON {rank, id, ok, value | error}' });
    }
    const entry = this.pending.get(result.rank)?.get(result.id);
    reply(response, 200, {});
    if (entry === undefined) return;
    this.pending.get(result.rank)?.delete(result.id);
    clearTimeout(entry.timer);
    if (result.ok) entry.resolve(result.value);
    else entry.reject(new DistributedError(`trainer rank ${result.rank}: ${entry.op} failed: ${result.error ?? 'no reason given'}`));
  }

  /** Marks a rank gone: its pending commands and every later one to it fail with `reason`. */
  rankLost(rank: number, reason: string): void {
    if (this.lost.has(rank)) return;
    this.lost.set(rank, reason);
    if (this.members.some((m) => m === null)) this.failJoin(new DistributedError(reason));
    this.streams.delete(rank);
    const pending = this.pending.get(rank);
    if (pending === undefined) return;
    for (const [id, entry] of pending) {
      clearTimeout(entry.timer);
      this.payloads.delete(`${rank}/${id}`);
      entry.reject(new DistributedError(`${reason}; ${entry.op} did not finish`));
    }
    pending.clear();
  }

  private commandStream(rank: number): Promise<http.ServerResponse> {
    const stream = this.streams.get(rank);
    if (stream !== undefined) return Promise.resolve(stream);
    return new Promise((resolve, reject) => {
      const timer = setTimeout(() => reject(new DistributedError(`trainer rank ${rank} did not open its command stream within ${this.options.timeoutMs} ms`)), this.options.timeoutMs);
      const waiters = this.streamWaiters.get(rank) ?? [];
      waiters.push((s) => {
        clearTimeout(timer);
        resolve(s);
      });
      this.streamWaiters.set(rank, waiters);
    });
  }

  /**
   * Sends `op` to `rank` (with `payload`, bytes the rank fetches) and resolves with its answer (rejects
   * with the rank's error, on its loss, or after `timeoutMs`).
   */
  async call(rank: number, op: string, args?: unknown, timeoutMs = this.options.timeoutMs, payload?: Buffer): Promise<unknown> {
    const lost = this.lost.get(rank);
    if (lost !== undefined) throw new DistributedError(`${lost}; cannot send it ${op}`);
    if (this.closed) throw new DistributedError(`the trainer rendezvous is closed; cannot send rank ${rank} ${op}`);
    const stream = await this.commandStream(rank);
    const id = this.nextId++;
    return new Promise((resolve, reject) => {
      const timer = setTimeout(() => {
        this.pending.get(rank)?.delete(id);
        this.payloads.delete(`${rank}/${id}`);
        reject(new DistributedError(`trainer rank ${rank} did not answer ${op} within ${timeoutMs} ms`));
      }, timeoutMs);
      if (payload !== undefined) this.payloads.set(`${rank}/${id}`, payload);
      if (!this.pending.has(rank)) this.pending.set(rank, new Map());
      (this.pending.get(rank) as Map<number, Pending>).set(id, { resolve, reject, timer, op });
      const command: RankCommand = { id, op, ...(args === undefined ? {} : { args }), ...(payload === undefined ? {} : { payload: true }) };
      stream.write(`${JSON.stringify(command)}\n`);
    });
  }

  /** Ends every command stream (the ranks then exit) and stops listening. */
  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    this.failJoin(new DistributedError('the trainer rendezvous closed'));
    for (const [rank, stream] of this.streams) {
      this.lost.set(rank, `the trainer rendezvous closed`);
      stream.end();
    }
    this.streams.clear();
    for (const [rank] of this.pending) this.rankLost(rank, 'the trainer rendezvous closed');
    const server = this.server;
    if (server === null) return;
    server.closeAllConnections();
    await new Promise<void>((resolve) => server.close(() => resolve()));
  }
}

function getBytes(url: string): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    http
      .get(url, (response) => {
        const chunks: Buffer[] = [];
        response.on('data', (c: Buffer) => chunks.push(c));
        response.on('end', () => {
          const body = Buffer.concat(chunks);
          if (response.statusCode === 200) resolve(body);
          else reject(new DistributedError(`GET ${url}: HTTP ${response.statusCode}: ${body.toString('utf8')}`));
        });
        response.on('error', reject);
      })
      .on('error', reject);
  });
}

function post(url: string, body: unknown): Promise<{ status: number; text: string }> {
  return new Promise((resolve, reject) => {
    const request = http.request(url, { method: 'POST', headers: { 'content-type': 'application/json' } }, (response) => {
      const chunks: Buffer[] = [];
      response.on('data', (c: Buffer) => chunks.push(c));
      response.on('end', () => resolve({ status: response.statusCode ?? 0, text: Buffer.concat(chunks).toString('utf8') }));
      response.on('error', reject);
    });
    request.on('error', reject);
    request.end(JSON.stringify(body));
  });
}

/**
 * A rank ≥ 1 joins the rendezvous at `url` (http://MASTER_ADDR:MASTER_PORT), retrying while rank 0 is
 * not yet listening, and waits for the others; rejects after `timeoutMs` or with rank 0's refusal.
 */
export async function joinRendezvous<Session>(url: string, join: { rank: number; worldSize: number; ring: { port: number; host?: string } }, timeoutMs: number): Promise<RendezvousAnswer<Session>> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    try {
      const { status, text } = await post(`${url}/rendezvous/join`, join);
      if (status !== 200) throw new RendezvousRefused(`the trainer rendezvous at ${url} refused rank ${join.rank}: ${(JSON.parse(text) as { error?: string }).error ?? text}`);
      return JSON.parse(text) as RendezvousAnswer<Session>;
    } catch (error) {
      if (error instanceof RendezvousRefused) throw error;
      if (Date.now() >= deadline) throw new DistributedError(`rank ${join.rank} could not reach the trainer rendezvous at ${url} within ${timeoutMs} ms: ${(error as Error).message}`);
      await new Promise((resolve) => setTimeout(resolve, 200));
    }
  }
}

class RendezvousRefused extends DistributedError {}

/**
 * A rank ≥ 1 takes rank 0's commands in order, answering each with `run`'s value or error, until
 * rank 0 ends the stream (resolves) or the connection breaks (rejects: rank 0 stopped).
 */
export function serveRendezvousCommands(url: string, rank: number, run: (command: RankCommand, payload?: Buffer) => Promise<unknown>): Promise<void> {
  return new Promise((resolve, reject) => {
    const request = http.get(`${url}/rendezvous/commands?rank=${rank}`, (response) => {
      if (response.statusCode !== 200) {
        reject(new DistributedError(`the trainer rendezvous at ${url} refused rank ${rank}'s command stream (HTTP ${response.statusCode})`));
        response.resume();
        return;
      }
      let buffered = '';
      let chain = Promise.resolve();
      let failed = false;
      response.setEncoding('utf8');
      response.on('data', (text: string) => {
        buffered += text;
        let newline = buffered.indexOf('\n');
        while (newline >= 0) {
          const line = buffered.slice(0, newline);
          buffered = buffered.slice(newline + 1);
          newline = buffered.indexOf('\n');
          if (line.trim() === '') continue;
          const command = JSON.parse(line) as RankCommand;
          chain = chain.then(async () => {
            let result: RankResult;
            try {
              const payload = command.payload === true ? await getBytes(`${url}/rendezvous/payload?rank=${rank}&id=${command.id}`) : undefined;
              result = { rank, id: command.id, ok: true, value: (await run(command, payload)) ?? null };
            } catch (error) {
              result = { rank, id: command.id, ok: false, error: (error as Error).message };
            }
            await post(`${url}/rendezvous/results`, result).catch((error: Error) => {
              failed = true;
              reject(new DistributedError(`rank ${rank} could not answer rank 0: ${error.message}`));
            });
          });
        }
      });
      response.on('end', () => {
        void chain.then(() => {
          if (!failed) resolve();
        });
      });
      response.on('error', (error) => reject(new DistributedError(`rank ${rank} lost the trainer rendezvous at ${url}: ${error.message}`)));
      response.on('aborted', () => reject(new DistributedError(`rank ${rank} lost the trainer rendezvous at ${url} (rank 0 stopped)`)));
    });
    request.on('error', (error) => reject(new DistributedError(`rank ${rank} lost the trainer rendezvous at ${url}: ${error.message}`)));
  });
}
