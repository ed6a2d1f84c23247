/**
 * SIGTERM during load (src/main.ts, src/server.ts stop()): the service runs as its own process, as an
 * operator starts it (`node --import tsx src/main.ts serve --config FILE`). With requests in flight
 * (40 PAR requests whose headers and half of whose body have arrived) and idle keep-alive connections,
 * it gets SIGTERM. Then: new connections are refused, idle keep-alive connections are closed at once,
 * every request in flight gets its complete answer (no reset), and the process exits 0 well within its
 * grace period (10 s).
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import http from 'node:http';
import { connect, type Socket } from 'node:net';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { makeHint, pkcePair } from '../helpers/rp.js';
import { freePort, waitFor } from '../helpers/redisServer.js';
import { serviceEnv, writeServiceConfig } from '../helpers/childService.js';

// This test starts the service as a child process with its own (memory-store) config, whatever
// TEST_STORE says; vitest runs test/e2e once per store project, so it runs only in the flows-redis
// project and skips the duplicate run in flows-memory (describe.skipIf on 'memory' would also run it
// under any other/unset TEST_STORE).
const run = process.env.TEST_STORE === 'redis' ? describe : describe.skip;

const IN_FLIGHT = 40;
const IDLE_KEEP_ALIVE = 10;
const GRACE_MS = 10_000; // src/main.ts: running.stop(10_000)
const CLIENT = { id: 'graceful-client', secret: 'graceful-secret-0123456789abcdef' };
const REDIRECT = 'https://rp.example/cb';

let dir: string;
let port: number;
let base: string;
let child: ChildProcess | undefined;
let output = '';
let exit: Promise<{ code: number | null; signal: NodeJS.Signals | null; at: number }>;

function writeConfig(): string {
  return writeServiceConfig(dir, { base, port, client: CLIENT, redirectUri: REDIRECT });
}

/** Resolves when a TCP connection to the port is refused (true) or accepted (false). */
function connectionRefused(): Promise<boolean> {
  return new Promise((resolve) => {
    const s = connect({ host: '127.0.0.1', port }, () => {
      s.destroy();
      resolve(false);
    });
    s.setTimeout(2_000, () => {
      s.destroy();
      resolve(false);
    });
    s.once('error', (err: NodeJS.ErrnoException) => resolve(err.code === 'ECONNREFUSED'));
  });
}

interface Answer {
  status?: number;
  connection?: string;
  body?: string;
  error?: string;
}

/**
 * A PAR request sent in two parts: the headers and the first half of the body now, the rest when
 * `finish()` is called. Once the first part has arrived, the server is working on the request.
 */
async function slowPar(agent: http.Agent): Promise<{ sent: Promise<void>; finish(): void; answer: Promise<Answer> }> {
  const { challenge } = pkcePair();
  const hint = await makeHint({
    clientId: CLIENT.id,
    secret: CLIENT.secret,
    audience: base,
    claims: { FirstName: 'Ada', LastName: 'Lovelace', PinCode: '4321' },
  });
  const body = new URLSearchParams({
    client_id: CLIENT.id,
    client_secret: CLIENT.secret,
    response_type: 'code',
    redirect_uri: REDIRECT,
    scope: 'openid issue.EmployeeBadge',
    state: randomBytes(8).toString('hex'),
    nonce: randomBytes(8).toString('hex'),
    id_token_hint: hint,
    code_challenge: challenge,
    code_challenge_method: 'S256',
  }).toString();
  const half = Math.floor(body.length / 2);
  const req = http.request(`${base}/v2.0/oidc/par`, {
    method: 'POST',
    agent,
    headers: { 'content-type': 'application/x-www-form-urlencoded', 'content-length': Buffer.byteLength(body) },
    timeout: 20_000,
  });
  const answer = new Promise<Answer>((resolve) => {
    req.on('response', (res) => {
      let text = '';
      res.setEncoding('utf8');
      res.on('data', (c) => (text += c));
      res.on('end', () => resolve({ status: res.statusCode, connection: res.headers.connection, body: text }));
      res.on('error', (err) =>
        resolve({ status: res.statusCode, body: text, error: (err as NodeJS.ErrnoException).code ?? err.message }),
      );
      res.on('aborted', () => resolve({ status: res.statusCode, body: text, error: 'aborted' }));
    });
    req.on('timeout', () => req.destroy(new Error('client timeout')));
    req.on('error', (err) => resolve({ error: (err as NodeJS.ErrnoException).code ?? err.message }));
  });
  req.flushHeaders();
  const sent = new Promise<void>((resolve) => req.write(body.slice(0, half), () => resolve()));
  return { sent, finish: () => req.end(body.slice(half)), answer };
}

/** Opens a keep-alive connection, makes one request on it and leaves it idle; resolves with the socket. */
function idleKeepAlive(): Promise<Socket> {
  return new Promise((resolve, reject) => {
    const agent = new http.Agent({ keepAlive: true, maxSockets: 1 });
    const req = http.get(`${base}/healthz`, { agent }, (res) => {
      res.resume();
      res.on('end', () => resolve(req.socket as Socket));
    });
    req.setTimeout(5_000, () => req.destroy(new Error('timeout')));
    req.on('error', reject);
  });
}

run('SIGTERM during load: the service drains and exits 0', () => {
  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), 'vc-graceful-'));
    port = await freePort();
    base = `http://127.0.0.1:${port}`;
    const config = writeConfig();
    child = spawn(process.execPath, ['--import', 'tsx', 'src/main.ts', 'serve', '--config', config], {
      cwd: process.cwd(),
      env: serviceEnv(),
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    child.stdout!.on('data', (d) => (output = (output + String(d)).slice(-4_000)));
    child.stderr!.on('data', (d) => (output = (output + String(d)).slice(-4_000)));
    exit = new Promise((resolve) => child!.once('exit', (code, signal) => resolve({ code, signal, at: Date.now() })));
    await waitFor(
      `the service to answer /healthz (output: ${output})`,
      async () => {
        if (child!.exitCode !== null) throw new Error(`the service exited: ${output}`);
        return (await fetch(`${base}/healthz`, { signal: AbortSignal.timeout(1_000) })).ok;
      },
      25_000,
      100,
    );
  }, 40_000);

  afterAll(async () => {
    if (child && child.exitCode === null && child.signalCode === null) {
      child.kill('SIGKILL');
      await exit;
    }
    rmSync(dir, { recursive: true, force: true });
  });

  it('answers every request in flight completely, refuses new connections, closes idle ones, exits 0 in time', async () => {
    // idle keep-alive connections, each with one answered request behind it
    const idle = await Promise.all(Array.from({ length: IDLE_KEEP_ALIVE }, () => idleKeepAlive()));
    const idleClosedAt: number[] = [];
    for (const s of idle) s.once('close', () => idleClosedAt.push(Date.now()));

    // 40 requests in flight: headers and half of the body are with the server
    const agent = new http.Agent({ keepAlive: true, maxSockets: IN_FLIGHT });
    const requests = await Promise.all(Array.from({ length: IN_FLIGHT }, () => slowPar(agent)));
    await Promise.all(requests.map((r) => r.sent));
    await new Promise((r) => setTimeout(r, 300)); // let the server parse what has arrived

    const sigtermAt = Date.now();
    expect(child!.kill('SIGTERM')).toBe(true);

    // new connections are refused once the server stops listening (bounded wait), while the 40 wait
    await waitFor('new connections to be refused after SIGTERM', () => connectionRefused(), 3_000, 50);
    // idle keep-alive connections are closed by the server rather than left to their timeout
    await waitFor(
      'idle keep-alive connections to be closed',
      async () => idleClosedAt.length === IDLE_KEEP_ALIVE,
      3_000,
      50,
    );
    expect(child!.exitCode, 'the process must wait for the requests in flight').toBeNull();

    // the rest of each body arrives; every request in flight gets its complete answer
    for (const r of requests) r.finish();
    const answers = await Promise.all(requests.map((r) => r.answer));
    const answeredAt = Date.now();
    const problems = answers.filter((a) => a.error || a.status !== 201);
    expect(problems, JSON.stringify(problems.slice(0, 3))).toEqual([]);
    for (const a of answers)
      expect(JSON.parse(a.body!)).toMatchObject({
        request_uri: expect.stringMatching(/^urn:ietf:params:oauth:request_uri:/),
        expires_in: expect.any(Number),
      });
    // and tells the client not to reuse the connection: the server closes it after the answer
    expect(answers.map((a) => a.connection)).toEqual(Array(IN_FLIGHT).fill('close'));

    // still refusing, and the process exits 0 within the grace period
    expect(await connectionRefused()).toBe(true);
    const exited = await Promise.race([exit, new Promise<undefined>((r) => setTimeout(r, GRACE_MS + 2_000))]);
    expect(exited, `the process did not exit within ${GRACE_MS + 2_000} ms; output: ${output}`).toBeDefined();
    expect(exited!.code, output).toBe(0);
    expect(exited!.at - sigtermAt).toBeLessThan(GRACE_MS);
    // once the last answer is out nothing holds the process: not the answered keep-alive connections
    // (the server's keepAliveTimeout is 5 s), not the store
    expect(exited!.at - answeredAt).toBeLessThan(3_000);
    agent.destroy();
  }, 30_000);
});
