/**
 * D14 under load (docs/decisions.md, "Store": timeouts and retries): a loaded store slows a flow, it does
 * not half-issue it. On a three-master Redis Cluster, 40 complete issuance flows run at once while busy
 * loops take the machine's CPU (10 s at most: other test files share the machine), one master stops
 * answering for 1.5 s, and the service's own process is not scheduled for 2.5 s (a busy-wait, longer than
 * the store's command timeout) while a credential request's take of its offer is on its way to Redis.
 * Every flow ends complete (credential in the wallet and valid in the status registry, ID token redeemed)
 * or refused with 503 `temporarily_unavailable` (retryable), and nothing is half-issued: a wallet without
 * its credential left its offer in the store to be taken again and its step without claims; a wallet with
 * its credential has its step's outcome; every status-list entry and every other record expires.
 */
import { randomBytes } from 'node:crypto';
import { spawn, type ChildProcess } from 'node:child_process';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import * as oidc from 'openid-client';
import { Browser, offerFromPage } from '../helpers/rp.js';
import { newWallet, pushIssuance } from '../helpers/flows.js';
import { startTestService, SECRETS, REDIRECT, type TestService } from '../helpers/service.js';
import { clusterKeys, startRedisCluster, waitFor, type RedisCluster } from '../helpers/redisServer.js';
import { createRedisStore, type RedisStore } from '../../src/store/redis.js';
import { StatusRegistry } from '../../src/status/registry.js';

// as test/e2e/redis-cluster.test.ts: its own cluster, so only in the flows-redis project
const run = process.env.TEST_STORE === 'redis' ? describe : describe.skip;

const FLOWS = 40;
const BUSY_LOOPS = 2;
const BUSY_MS = 10_000;
const PAUSE_MS = 1_500;
const STALL_MS = 2_500;
const PIN = '4321';
const attributes = { FirstName: 'Ada', LastName: 'Lovelace', Email: 'ada@example.com' };
const CLIENT = { id: 'issuer-pkce', secret: SECRETS.pkceIssuer };
const keyPrefix = `load:${randomBytes(4).toString('hex')}:`;

let cluster: RedisCluster | undefined;
let svc: TestService | undefined;
const busy: ChildProcess[] = [];
const stopBusy = () => busy.splice(0).forEach((p) => p.kill('SIGKILL'));
process.once('exit', stopBusy);

/** The process busy (not scheduled, as on a loaded machine) for longer than the store's command timeout. */
function stall(): void {
  const until = performance.now() + STALL_MS;
  while (performance.now() < until) {
    /* not scheduled */
  }
}

/** A step answered 503 `temporarily_unavailable`: the flow was refused, and may be tried again. */
class Refused extends Error {}

/** How far a flow got: what the checks afterwards need. */
interface Flow {
  offerId?: string;
  stepId?: string;
  wallet?: Awaited<ReturnType<typeof newWallet>>;
  serialNumber?: string;
  outcome: 'completed' | 'refused' | 'failed';
  error?: string;
}

/** Was `err` a 503 `temporarily_unavailable`, as each client reports it (openid-client, the dev wallet)? */
function isRetryable(err: unknown): boolean {
  const e = err as { status?: number; error?: string; cause?: unknown };
  if (err instanceof Refused) return true;
  if (e.status === 503) return e.error === undefined || e.error === 'temporarily_unavailable';
  return e.cause instanceof Response && e.cause.status === 503;
}

/** A browser step; a 503 page is a refusal. */
async function follow(browser: Browser, url: string, what: string) {
  const page = await browser.follow(url);
  if (page.res?.status === 503) throw new Refused(`${what}: 503`);
  return page;
}

/** One complete issuance (as test/helpers/flows.ts completeIssuance), noting how far it got. */
async function oneFlow(flow: Flow): Promise<void> {
  const pushed = await pushIssuance(svc!.url, {
    clientId: CLIENT.id,
    secret: CLIENT.secret,
    attributes,
    pin: PIN,
    redirectUri: REDIRECT,
  });
  const browser = new Browser(REDIRECT);
  const prompt = await follow(browser, pushed.authorizeUrl.href, 'authorise');
  if (!prompt.html) throw new Error(`expected the prompt page, got ${prompt.res?.status} at ${prompt.final}`);
  flow.stepId = `v2.${new URL(prompt.final).pathname.split('/').pop()}`;
  const offer = offerFromPage(prompt.html);
  flow.offerId = new URL(new URL(offer).searchParams.get('credential_offer_uri')!).pathname.split('/').pop();
  flow.wallet = await newWallet();
  await flow.wallet.receive(offer, { pin: PIN });
  const done = await follow(browser, `${prompt.final}/continue`, 'continue');
  if (done.html !== undefined) throw new Error(`expected a redirect to the client, got ${done.res?.status}`);
  const tokens = await oidc.authorizationCodeGrant(pushed.config, new URL(done.final), {
    pkceCodeVerifier: pushed.verifier,
    expectedState: pushed.state,
    expectedNonce: pushed.nonce,
    idTokenExpected: true,
  });
  expect(tokens.claims()).toMatchObject({ ...attributes, nonce: pushed.nonce });
  flow.serialNumber = tokens.claims()!.SerialNumber as string;
}

run('D14: many complete flows on a Redis Cluster while the machine is busy and a master pauses', () => {
  beforeAll(async () => {
    cluster = await startRedisCluster(3);
    const spec = { cluster: cluster.nodes, keyPrefix };
    svc = await startTestService({ store: spec }, { store: await createRedisStore(spec) });
  }, 60_000);
  afterAll(async () => {
    stopBusy();
    cluster?.processes.forEach((p) => p.resume());
    await svc?.stop();
    await cluster?.destroy();
  });

  it(`${FLOWS} concurrent flows: each complete or refused 503, none half-issued`, async () => {
    for (let i = 0; i < BUSY_LOOPS; i++) busy.push(spawn(process.execPath, ['-e', 'for(;;){}'], { stdio: 'ignore' }));
    setTimeout(stopBusy, BUSY_MS);
    const master = cluster!.processes[1];
    const later = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
    const pausing = (async () => {
      await later(1_000);
      master.pause();
      await later(PAUSE_MS);
      master.resume();
    })();
    // this process not scheduled while a credential request's take of its offer is on its way to Redis:
    // the third credential request's, once ioredis has written it (its auto-pipeline goes out in a later turn)
    const store = svc!.service.store as RedisStore;
    const consume = store.consume.bind(store);
    let takes = 0;
    store.consume = <T>(key: string) => {
      const taking = consume<T>(key);
      if (key.endsWith(':offer') && ++takes === 3) setImmediate(() => setImmediate(() => setImmediate(stall)));
      return taking;
    };
    const flows: Flow[] = Array.from({ length: FLOWS }, () => ({ outcome: 'failed' }));
    await Promise.all(
      flows.map((flow) =>
        oneFlow(flow).then(
          () => void (flow.outcome = 'completed'),
          (err: unknown) => {
            flow.outcome = isRetryable(err) ? 'refused' : 'failed';
            flow.error = `${(err as Error).message} ${JSON.stringify(err)}`.slice(0, 300);
          },
        ),
      ),
    );
    await pausing;
    stopBusy();

    const summary = JSON.stringify(flows.map((f) => f.error ?? f.outcome));
    expect(
      flows.filter((f) => f.outcome === 'failed'),
      summary,
    ).toEqual([]);
    expect(flows.filter((f) => f.outcome === 'completed').length, summary).toBeGreaterThan(0);

    const statuses = new StatusRegistry(store, 1 << 17, 'wallet');
    for (const flow of flows) {
      const held = flow.wallet?.list() ?? [];
      if (flow.outcome === 'completed') {
        expect(held.map((c) => c.claims)).toEqual([attributes]);
        expect((await statuses.status(flow.serialNumber!))?.status).toBe('valid');
        continue;
      }
      if (!flow.offerId) continue; // refused before the prompt: nothing of the flow's issuance exists
      if (held.length) {
        // refused after the wallet had its credential (the browser's continue, the code exchange): the
        // step has its outcome, so the relying party's retry finishes the flow
        expect(await store.get(`step:{${flow.stepId}}:claims`), flow.error).toBeDefined();
        continue;
      }
      // no credential: the offer is there to be taken again (a late call's undo may still be on its way)
      // and the step has no outcome the holder's browser could finish with
      await waitFor(
        `the offer of a refused flow (${flow.error})`,
        async () => (await store.get(`wallet:{${flow.offerId}}:offer`)) !== undefined,
      );
      expect(await store.get(`step:{${flow.stepId}}:claims`), flow.error).toBeUndefined();
    }

    // everything written expires (TTL -1: never), but the key sets: status-list entries with their
    // credentials, receipts within minutes
    const keys = await clusterKeys(cluster!, `${keyPrefix}*`);
    const client = store.client;
    const ttls = await Promise.all(keys.map(async (k) => [k, await client.ttl(k)] as const));
    expect(ttls.filter(([k, ttl]) => !k.startsWith(`${keyPrefix}keys:`) && ttl === -1)).toEqual([]);
    for (const [key, ttl] of ttls) {
      if (key.includes(':rcpt:')) expect(ttl, key).toBeLessThanOrEqual(600);
      if (/:status:wallet:\{[^}]+\}:i:\d+$/.test(key)) expect(ttl, key).toBeLessThanOrEqual(400 * 86_400);
    }
  }, 120_000);
});
