import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { Writable } from 'node:stream';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { Webhook } from 'standardwebhooks';
import { WebhookQueue, type Delivery, type WebhookSettings } from '../../src/webhooks/queue.js';
import { createLogger } from '../../src/log.js';
import type { Store } from '../../src/store/types.js';
import { testStore } from '../helpers/stores.js';
import { startWebhookReceiver, webhookSecret } from '../helpers/webhookReceiver.js';

/**
 * D13 / issue 17, Webhooks: Standard Webhooks headers and signatures, at-least-once delivery with
 * retries (same webhook-id), 410 stops, timeouts, no redirects followed, a bounded read of the answer,
 * the retry window, rotation of secrets, and one log line per attempt without the body. A real HTTP
 * receiver on loopback verifies every delivery with the standardwebhooks package.
 */
let store: Store;
const queues: WebhookQueue[] = [];
const closers: (() => Promise<void>)[] = [];

beforeAll(async () => {
  store = await testStore();
});
afterEach(async () => {
  await Promise.all(queues.splice(0).map((q) => q.close()));
  await Promise.all(closers.splice(0).map((c) => c()));
});
afterAll(async () => store.close());

function logCapture() {
  const lines: Record<string, unknown>[] = [];
  const stream = new Writable({
    write(chunk, _enc, done) {
      for (const line of String(chunk).split('\n').filter(Boolean)) lines.push(JSON.parse(line));
      done();
    },
  });
  return { lines, logger: createLogger('info', stream) };
}

// one client per test: deliveries a test left pending in the shared store never reach another test's receiver
let client = 'rp';
let clients = 0;
afterEach(() => {
  client = `rp${++clients}`;
});

function queueFor(
  url: string,
  secrets: string[],
  settings: Partial<WebhookSettings> = {},
  logger = createLogger('silent'),
) {
  const queue = new WebhookQueue(
    store,
    new Map([[client, { url, secrets }]]),
    { timeout: 2, firstRetry: 0.2, retryWindow: 'PT1M', ...settings },
    logger,
  );
  queues.push(queue);
  return queue;
}

async function receiver(secret: string, answer?: Parameters<typeof startWebhookReceiver>[1]) {
  const r = await startWebhookReceiver(secret, answer);
  closers.push(() => r.close());
  return r;
}

const record = (queue: WebhookQueue, id: string) => queue.get(id);
async function until<T>(what: () => Promise<T | undefined | false>, ms = 10_000): Promise<T> {
  const end = Date.now() + ms;
  for (;;) {
    const v = await what();
    if (v) return v;
    if (Date.now() > end) throw new Error('timed out waiting');
    await new Promise((r) => setTimeout(r, 50));
  }
}

describe('Standard Webhooks delivery (D13)', () => {
  it('headers webhook-id, webhook-timestamp, webhook-signature; the body is {type, timestamp, data}; it verifies with the standardwebhooks package', async () => {
    const secret = webhookSecret();
    const r = await receiver(secret);
    const queue = queueFor(r.url, [secret]);
    const id = await queue.enqueue(client, 'flow.completed', {
      state: 's1',
      ContinuationContext: 'c',
      client_id: 'rp',
      flow: 'issuance',
    });
    const hook = await r.next((h) => h.id === id);
    expect(hook.id).toMatch(/^msg_[0-9a-f]{32}$/);
    expect(Number(hook.timestamp)).toBeCloseTo(Date.now() / 1000, -1);
    expect(hook.signature).toMatch(/^v1,[A-Za-z0-9+/]+=*$/);
    expect(hook.payload).toEqual({
      type: 'flow.completed',
      timestamp: expect.any(String),
      data: { state: 's1', ContinuationContext: 'c', client_id: 'rp', flow: 'issuance' },
    });
    await until(async () => (await record(queue, id))?.state === 'delivered');
    expect(r.rejected).toEqual([]);
  });

  it('answered 500 twice, then 204: delivered on the third attempt, with the same webhook-id and body and a fresh timestamp', async () => {
    const secret = webhookSecret();
    let calls = 0;
    const r = await receiver(secret, (_h, _req, res) => {
      res.statusCode = ++calls <= 2 ? 500 : 204;
      res.end();
    });
    const queue = queueFor(r.url, [secret]);
    const id = await queue.enqueue(client, 'flow.completed', { state: 's2' });
    const delivered = await until(async () => {
      const d = await record(queue, id);
      return d?.state === 'delivered' && d;
    });
    expect(delivered.attempts).toBe(3);
    expect(r.received.map((h) => h.id)).toEqual([id, id, id]);
    expect(new Set(r.received.map((h) => h.raw)).size).toBe(1);
    // retried after firstRetry, then about twice as late (±20 % jitter)
    const gaps = [r.received[1].at - r.received[0].at, r.received[2].at - r.received[1].at];
    expect(gaps[0]).toBeGreaterThanOrEqual(150);
    expect(gaps[1]).toBeGreaterThanOrEqual(300);
  });

  it('410 Gone stops for good: one attempt, the delivery gave up', async () => {
    const secret = webhookSecret();
    const r = await receiver(secret, (_h, _req, res) => {
      res.statusCode = 410;
      res.end();
    });
    const queue = queueFor(r.url, [secret]);
    const id = await queue.enqueue(client, 'flow.failed', { state: 's3' });
    const failed = await until(async () => {
      const d = await record(queue, id);
      return d?.state === 'failed' && d;
    });
    expect(failed.last).toMatchObject({ status: 410 });
    await new Promise((res) => setTimeout(res, 800));
    expect(r.received).toHaveLength(1);
    expect((await queue.list({ failed: true })).map((d) => d.id)).toContain(id);
  });

  it('a receiver that hangs: the attempt times out after webhooks.timeout and is retried', async () => {
    const secret = webhookSecret();
    const r = await receiver(secret, () => new Promise(() => undefined)); // never answers
    const queue = queueFor(r.url, [secret], { timeout: 0.5 });
    const id = await queue.enqueue(client, 'flow.completed', { state: 's4' });
    const retried = await until(async () => {
      const d = await record(queue, id);
      return d && d.attempts >= 1 && d;
    });
    expect(retried.state).toBe('pending');
    expect(retried.last?.error).toBe('no answer within 0.5 s');
    expect(retried.last?.status).toBeUndefined();
  });

  it('a redirect is not followed: the delivery is retried, the redirect target gets nothing', async () => {
    const secret = webhookSecret();
    const target = await receiver(secret);
    const r = await receiver(secret, (_h, _req, res) => {
      res.writeHead(307, { location: target.url }).end();
    });
    const queue = queueFor(r.url, [secret]);
    const id = await queue.enqueue(client, 'flow.completed', { state: 's5' });
    const d = await until(async () => {
      const found = await record(queue, id);
      return found && found.attempts >= 1 && found;
    });
    expect(d).toMatchObject({ state: 'pending', last: { status: 307 } });
    expect(target.received).toEqual([]);
  });

  it('an answer of 10 MB: at most 64 KiB is read, and the delivery is done', async () => {
    const secret = webhookSecret();
    let written = 0;
    const server = createServer((req, res) => {
      req.resume();
      res.writeHead(200, { 'content-type': 'text/plain' });
      const chunk = Buffer.alloc(64 * 1024, 'x');
      const pump = () => {
        while (written < 10 * 1024 * 1024) {
          written += chunk.length;
          if (!res.write(chunk)) return void res.once('drain', pump);
        }
        res.end();
      };
      pump();
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    closers.push(async () => {
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    });
    const queue = queueFor(`http://127.0.0.1:${(server.address() as AddressInfo).port}/`, [secret]);
    const id = await queue.enqueue(client, 'flow.completed', { state: 's6' });
    await until(async () => (await record(queue, id))?.state === 'delivered');
    expect(written).toBeLessThan(10 * 1024 * 1024);
  });

  it('the retry window ends the retries: the delivery gave up', async () => {
    const secret = webhookSecret();
    const r = await receiver(secret, (_h, _req, res) => {
      res.statusCode = 503;
      res.end();
    });
    const queue = queueFor(r.url, [secret], { firstRetry: 0.2, retryWindow: 'PT1S' });
    const id = await queue.enqueue(client, 'flow.completed', { state: 's7' });
    const failed = await until(async () => {
      const d = await record(queue, id);
      return d?.state === 'failed' && d;
    });
    // how many attempts fit in the window depends on the machine's pace; after it, none
    expect(failed.attempts).toBeGreaterThanOrEqual(1);
    expect(Date.now() - failed.createdAt).toBeLessThan(10_000);
    await new Promise((res) => setTimeout(res, 1_000));
    expect(r.received).toHaveLength(failed.attempts);
  });

  it('rotation: every listed secret signs; a receiver that knows only one of them verifies', async () => {
    const [oldSecret, newSecret] = [webhookSecret(), webhookSecret()];
    const r = await receiver(newSecret);
    const queue = queueFor(r.url, [oldSecret, newSecret]);
    const id = await queue.enqueue(client, 'flow.completed', { state: 's8' });
    const hook = await r.next((h) => h.id === id);
    expect(hook.signature.split(' ')).toHaveLength(2);
    expect(() =>
      new Webhook(oldSecret).verify(hook.raw, {
        'webhook-id': hook.id,
        'webhook-timestamp': hook.timestamp,
        'webhook-signature': hook.signature,
      }),
    ).not.toThrow();
  });

  it('resend: a delivery that gave up is sent again with its webhook-id and body', async () => {
    const secret = webhookSecret();
    let gone = true;
    const r = await receiver(secret, (_h, _req, res) => {
      res.statusCode = gone ? 410 : 204;
      res.end();
    });
    const queue = queueFor(r.url, [secret]);
    const id = await queue.enqueue(client, 'flow.completed', { state: 's9' });
    await until(async () => (await record(queue, id))?.state === 'failed');
    gone = false;
    expect(await queue.resend(id)).toBe('queued');
    expect(await queue.resend(id)).toBe('pending'); // already being retried: left as it is
    expect(await queue.resend('msg_unknown')).toBe('unknown');
    await until(async () => (await record(queue, id))?.state === 'delivered');
    expect(r.received.map((h) => h.id)).toEqual([id, id]);
    expect(r.received[0].raw).toBe(r.received[1].raw);
  });

  it('logs one line per attempt (client, webhook id, type, status, duration), never the body', async () => {
    const secret = webhookSecret();
    const r = await receiver(secret);
    const { lines, logger } = logCapture();
    const queue = queueFor(r.url, [secret], {}, logger);
    const id = await queue.enqueue(client, 'flow.completed', {
      state: 'state-not-logged',
      ContinuationContext: 'context-not-logged',
    });
    await until(async () => (await record(queue, id))?.state === 'delivered');
    const attempts = lines.filter((l) => l.msg === 'webhook attempt');
    expect(attempts).toHaveLength(1);
    expect(attempts[0]).toMatchObject({
      client,
      webhookId: id,
      type: 'flow.completed',
      status: 204,
      ms: expect.any(Number),
    });
    const text = JSON.stringify(lines);
    expect(text).not.toContain('context-not-logged');
    expect(text).not.toContain('state-not-logged');
    expect(text).not.toContain(secret);
  });

  it('two pollers on one store: each delivery is attempted once', async () => {
    const secret = webhookSecret();
    const r = await receiver(secret);
    const [a, b] = [queueFor(r.url, [secret]), queueFor(r.url, [secret])];
    const ids = await Promise.all(
      Array.from({ length: 20 }, (_, i) => (i % 2 ? a : b).enqueue(client, 'flow.completed', { state: `p${i}` })),
    );
    await Promise.all([a.poll(), b.poll(), a.poll(), b.poll()]);
    await until(async () =>
      (await Promise.all(ids.map((id) => record(a, id)))).every((d: Delivery | undefined) => d?.state === 'delivered'),
    );
    expect(r.received.map((h) => h.id).sort()).toEqual([...ids].sort());
  });
});
