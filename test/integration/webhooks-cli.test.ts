/**
 * Issue 17: `npm run webhooks -- list [--failed]` and `resend <webhook-id>`, run as an operator runs them
 * (a child process on the servers' config file), against deliveries that a WebhookQueue on the same Redis
 * and key prefix made to real loopback receivers: one answers 410 (the delivery gives up), one 204, one
 * 503 (the delivery stays pending).
 */
import { execFile } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import type { ServerResponse } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { isDeepStrictEqual } from 'node:util';
import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadConfig } from '../../src/config/load.js';
import { createLogger } from '../../src/log.js';
import { createRedisStore } from '../../src/store/redis.js';
import type { Store } from '../../src/store/types.js';
import { WebhookQueue, webhookTargets, type Delivery } from '../../src/webhooks/queue.js';
import { serviceEnv } from '../helpers/childService.js';
import { REDIS_URL } from '../helpers/stores.js';
import { startWebhookReceiver, webhookSecret } from '../helpers/webhookReceiver.js';

// The command reads the store that running servers share, so it needs Redis whatever TEST_STORE says:
// these run once, in the flows-redis project, and skip the duplicate run in flows-memory (the memory
// store's case is one of these tests: the command refuses it).
const run = process.env.TEST_STORE === 'redis' ? describe : describe.skip;

const ROOT = fileURLToPath(new URL('../..', import.meta.url));
/** a bearer value in every body: it must never be printed */
const CONTEXT = `ctx-${randomBytes(16).toString('hex')}`;
const CLIENT_SECRET = `client-secret-${randomBytes(8).toString('hex')}`;

interface Result {
  code: number;
  stdout: string;
  stderr: string;
}

function exec(file: string, args: string[]): Promise<Result> {
  return new Promise((resolve) => {
    execFile(file, args, { cwd: ROOT, env: serviceEnv(), timeout: 60_000 }, (err, stdout, stderr) => {
      resolve({ code: err ? (typeof err.code === 'number' ? err.code : -1) : 0, stdout, stderr });
    });
  });
}

/** `tsx src/main.ts webhooks ...`, as the npm script runs it */
const webhooksCli = (...args: string[]) =>
  exec(process.execPath, ['--import', 'tsx', 'src/main.ts', 'webhooks', ...args]);

/** the servers' config: three clients with webhooks; key files that do not exist and are not generated */
function writeConfig(dir: string, name: string, store: unknown, urls: Record<string, string>, secret: string): string {
  const file = join(dir, name);
  writeFileSync(
    file,
    JSON.stringify({
      baseUrl: 'http://127.0.0.1:3999',
      store,
      logLevel: 'silent',
      // the command never loads keys: had it built the service, the missing files would stop it
      keys: {
        idToken: join(dir, 'id-token.jwks.json'),
        credential: join(dir, 'credential.jwks.json'),
        cookies: join(dir, 'cookies.json'),
        generate: false,
      },
      webhooks: { timeout: 2, firstRetry: 60, retryWindow: 'PT1H' },
      credentialTypes: [{ name: 'EmployeeBadge', validity: 'P30D', attributes: { FirstName: { type: 'string' } } }],
      clients: Object.entries(urls).map(([clientId, url]) => ({
        clientId,
        clientSecret: CLIENT_SECRET,
        redirectUris: ['http://127.0.0.1:3999/cb'],
        scopes: ['EmployeeBadge'],
        webhook: { url, secret },
      })),
    }),
  );
  return file;
}

/** the table's rows without its header, each split into its columns */
function rows(stdout: string): string[][] {
  const [header, ...lines] = stdout.trimEnd().split('\n');
  expect(header.split(/\s{2,}/)).toEqual([
    'WEBHOOK-ID',
    'CLIENT',
    'TYPE',
    'STATE',
    'ATTEMPTS',
    'CREATED',
    'LAST',
    'NEXT',
  ]);
  return lines.map((l) => l.split(/\s{2,}/));
}

// every test starts the command as its own process (tsx compiles at each start): on a loaded machine a
// start takes seconds, so these tests get room rather than a tight limit
run('the webhooks command (issue 17)', { timeout: 180_000 }, () => {
  const prefix = `test:whcli:${randomBytes(6).toString('hex')}:`;
  const secret = webhookSecret();
  let dir: string;
  let configFile: string;
  let memoryConfigFile: string;
  let store: Store;
  let queue: WebhookQueue;
  let receivers: Record<'gone' | 'ok' | 'retry', Awaited<ReturnType<typeof startWebhookReceiver>>>;
  const ids = { goneOld: '', delivered: '', pending: '', goneNew: '' };
  const records = new Map<string, Delivery>();

  beforeAll(async () => {
    const answer = (status: number) => (_h: unknown, _req: unknown, res: ServerResponse) => {
      res.statusCode = status;
      res.end();
    };
    receivers = {
      gone: await startWebhookReceiver(secret, answer(410)),
      ok: await startWebhookReceiver(secret),
      retry: await startWebhookReceiver(secret, answer(503)),
    };
    dir = mkdtempSync(join(tmpdir(), 'webhooks-cli-'));
    const urls = { 'rp-gone': receivers.gone.url, 'rp-ok': receivers.ok.url, 'rp-retry': receivers.retry.url };
    configFile = writeConfig(dir, 'redis.json', { url: REDIS_URL, keyPrefix: prefix }, urls, secret);
    memoryConfigFile = writeConfig(dir, 'memory.json', 'memory', urls, secret);

    // the deliveries a server on this config would make (its targets built as the service builds them)
    // no environment: vitest's (BASE_URL=/) would override the file
    const { config } = await loadConfig(configFile, {});
    store = await createRedisStore({ url: REDIS_URL, keyPrefix: prefix });
    queue = new WebhookQueue(store, webhookTargets(config.clients), config.webhooks, createLogger('silent'), {
      poll: false,
    });
    const now = Date.now();
    const data = { state: 's', ContinuationContext: CONTEXT, client_id: 'x', flow: 'issuance' };
    ids.goneOld = await queue.enqueue('rp-gone', 'flow.completed', data, now - 4_000);
    ids.delivered = await queue.enqueue('rp-ok', 'flow.completed', data, now - 3_000);
    ids.pending = await queue.enqueue('rp-retry', 'flow.failed', data, now - 2_000);
    ids.goneNew = await queue.enqueue('rp-gone', 'flow.expired', data, now - 1_000);
    await queue.poll(); // a queue without polling of its own sends only when asked
    const expected = {
      [ids.goneOld]: 'failed',
      [ids.delivered]: 'delivered',
      [ids.pending]: 'pending',
      [ids.goneNew]: 'failed',
    };
    // every delivery has had its first attempt (expect.poll is for tests, not hooks)
    const delivery = (id: string) => queue.get(id);
    const states = async () =>
      Object.fromEntries(
        (await Promise.all(Object.values(ids).map(delivery)))
          .filter((d) => d && d.attempts > 0)
          .map((d) => [d!.id, d!.state]),
      );
    for (const end = Date.now() + 10_000; !isDeepStrictEqual(await states(), expected);) {
      if (Date.now() > end) throw new Error(`deliveries not attempted in time: ${JSON.stringify(await states())}`);
      await new Promise((r) => setTimeout(r, 50));
    }
    for (const id of Object.values(ids)) records.set(id, (await delivery(id))!);
  });

  afterAll(async () => {
    await queue?.close();
    await store?.close();
    await Promise.all(Object.values(receivers ?? {}).map((r) => r.close()));
    if (dir) rmSync(dir, { recursive: true, force: true });
    // this run's keys only, by its unique prefix
    const redis = new Redis(REDIS_URL);
    try {
      for await (const keys of redis.scanStream({ match: `${prefix}*`, count: 100 })) {
        if ((keys as string[]).length) await redis.del(...(keys as string[]));
      }
    } finally {
      redis.disconnect();
    }
  });

  /** nothing secret in what the command printed */
  function expectNoSecrets(r: Result) {
    for (const text of [r.stdout, r.stderr]) {
      expect(text).not.toContain(CONTEXT);
      expect(text).not.toContain(secret);
      expect(text).not.toContain(CLIENT_SECRET);
      expect(text).not.toContain('"data"');
    }
  }

  it('list --failed: the deliveries that gave up, newest first, one line each, never the body', async () => {
    const r = await webhooksCli('list', '--failed', '--config', configFile);
    expect(r.code, r.stderr).toBe(0);
    expectNoSecrets(r);
    const lines = rows(r.stdout);
    expect(lines.map((l) => l[0])).toEqual([ids.goneNew, ids.goneOld]);
    expect(lines[0]).toEqual([
      ids.goneNew,
      'rp-gone',
      'flow.expired',
      'failed',
      '1',
      new Date(records.get(ids.goneNew)!.createdAt).toISOString(),
      'HTTP 410',
      '-',
    ]);
    expect(lines[1]).toEqual([
      ids.goneOld,
      'rp-gone',
      'flow.completed',
      'failed',
      '1',
      new Date(records.get(ids.goneOld)!.createdAt).toISOString(),
      'HTTP 410',
      '-',
    ]);
  });

  it('list (through the npm script): pending and failed, newest first (delivered ones are done); a pending one shows its next attempt', async () => {
    const r = await exec('npm', ['run', '--silent', 'webhooks', '--', 'list', '--config', configFile]);
    expect(r.code, r.stderr).toBe(0);
    expectNoSecrets(r);
    const lines = rows(r.stdout);
    expect(lines.map((l) => l[0])).toEqual([ids.goneNew, ids.pending, ids.goneOld]);
    const pending = records.get(ids.pending)!;
    expect(lines[1]).toEqual([
      ids.pending,
      'rp-retry',
      'flow.failed',
      'pending',
      '1',
      new Date(pending.createdAt).toISOString(),
      'HTTP 503',
      new Date(pending.nextAt!).toISOString(),
    ]);
  });

  it('resend: queued with the same webhook-id; a running instance (here a queue poll) delivers the same body', async () => {
    const first = receivers.gone.received.find((h) => h.id === ids.goneOld)!;
    expect(first).toBeDefined();
    receivers.gone.setAnswer(undefined); // the receiver is back: 204

    const r = await webhooksCli('resend', ids.goneOld, '--config', configFile);
    expect(r.code, r.stderr).toBe(0);
    expectNoSecrets(r);
    expect(r.stdout).toContain(`${ids.goneOld}: queued`);
    expect(r.stdout).toContain('a running instance delivers it within a second');
    // the command only queued it: nothing was sent from its process
    expect(receivers.gone.received.filter((h) => h.id === ids.goneOld)).toHaveLength(1);
    expect((await queue.get(ids.goneOld))?.state).toBe('pending');
    // nor taken under a lease (which would hold it from the running instances for 2 × timeout + 5 s):
    // it is due now in the schedule every instance polls (docs/architecture.md: webhooks:due)
    const redis = new Redis(REDIS_URL);
    const dueAt = Number(await redis.zscore(`${prefix}webhooks:due`, ids.goneOld).finally(() => redis.disconnect()));
    expect(dueAt).toBeGreaterThan(0);
    expect(dueAt).toBeLessThanOrEqual(Date.now());

    await queue.poll();
    const again = await receivers.gone.next((h) => h.id === ids.goneOld && h !== first, 5_000);
    expect(again.raw).toBe(first.raw);
    expect(await queue.get(ids.goneOld)).toMatchObject({ state: 'delivered', last: { status: 204 } });
    // the other failed one was left alone
    expect((await queue.list({ failed: true })).map((d) => d.id)).toEqual([ids.goneNew]);
  });

  it('resend of an unknown webhook-id: exit 1 and says so', async () => {
    const unknown = `msg_${'0'.repeat(32)}`;
    const r = await webhooksCli('resend', unknown, '--config', configFile);
    expect(r.code).toBe(1);
    expect(r.stderr).toContain(`no delivery with webhook-id ${unknown}`);
    expect(r.stdout).toBe('');
  });

  it("a memory-store config: exit 1, saying it cannot see a running server's deliveries (no empty list)", async () => {
    const lines = [['list'], ['list', '--failed'], ['resend', ids.goneNew]];
    const results = await Promise.all(lines.map((args) => webhooksCli(...args, '--config', memoryConfigFile)));
    for (const [i, r] of results.entries()) {
      const args = lines[i];
      expect(r.code, args.join(' ')).toBe(1);
      expect(r.stderr).toContain('store: memory');
      expect(r.stderr).toContain("cannot see a running server's deliveries");
      expect(r.stdout).toBe('');
    }
  });

  it('anything else: the usage and exit 2', async () => {
    const lines = [
      ['bogus'],
      [],
      ['resend'],
      ['list', 'extra'],
      ['list', '--nope'],
      ['resend', ids.goneNew, '--failed'],
    ];
    const results = await Promise.all(lines.map((args) => webhooksCli(...args, '--config', configFile)));
    for (const [i, r] of results.entries()) {
      const args = lines[i];
      expect(r.code, args.join(' ')).toBe(2);
      expect(r.stderr).toContain('Usage:');
      expect(r.stdout).toBe('');
    }
    // nothing was resent by the refused command line
    expect((await queue.list({ failed: true })).map((d) => d.id)).toEqual([ids.goneNew]);
  });
});
