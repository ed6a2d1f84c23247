import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import * as oidc from 'openid-client';
import { startTestService, REDIRECT, type TestService } from '../helpers/service.js';
import { Browser, makeHint, offerFromPage, pkcePair, postForm } from '../helpers/rp.js';
import { newWallet, requestFromPage } from '../helpers/flows.js';
import { startWebhookReceiver, webhookSecret } from '../helpers/webhookReceiver.js';
import { startInstancesBehindProxy } from '../helpers/roundRobin.js';
import { createRedisStore } from '../../src/store/redis.js';
import { REDIS_URL } from '../helpers/stores.js';
import type { DevWallet } from '../../src/wallet/holder.js';
import { leaks } from '../helpers/logSecrets.js';

/**
 * D13's events as a relying party receives them: flow.failed (PIN attempts used up, the wallet declined)
 * and flow.expired (the prompt timed out) carry no ContinuationContext; a delivery pending when the
 * service stops is delivered after it starts again; three instances on one Redis deliver every flow's
 * webhook, none twice. A real receiver verifies every delivery with the standardwebhooks package.
 */
const CLIENT = { id: 'ext-rp', secret: 'ext-rp-secret-0123456789abc' };
const badge = { FirstName: 'Ada', LastName: 'Lovelace' };
const externalClient = (url: string, secret: string) => ({
  clientId: CLIENT.id,
  clientName: 'External RP',
  clientSecret: CLIENT.secret,
  redirectUris: [REDIRECT],
  scopes: ['issue.EmployeeBadge', 'EmployeeBadge', 'External'],
  webhook: { url, secret },
});

/** PAR for an External flow (issuance with a hint, or verification), then the holder's browser on the prompt. */
async function startFlow(base: string, kind: 'issuance' | 'verification', extra: Record<string, unknown> = {}) {
  const state = randomBytes(8).toString('hex');
  const { verifier, challenge } = pkcePair();
  const par = await postForm(`${base}/v2.0/oidc/par`, {
    client_id: CLIENT.id,
    client_secret: CLIENT.secret,
    response_type: 'code',
    redirect_uri: REDIRECT,
    state,
    nonce: 'n',
    code_challenge: challenge,
    code_challenge_method: 'S256',
    scope: kind === 'issuance' ? 'openid issue.EmployeeBadge External' : 'openid EmployeeBadge External',
    ...(kind === 'issuance'
      ? {
          id_token_hint: await makeHint({
            clientId: CLIENT.id,
            secret: CLIENT.secret,
            audience: base,
            claims: { ...badge, ...extra },
          }),
        }
      : {}),
  });
  expect(par.status, JSON.stringify(par.body)).toBe(201);
  const browser = new Browser(REDIRECT);
  const prompt = await browser.follow(
    `${base}/v2.0/oidc/authorize?${new URLSearchParams({ client_id: CLIENT.id, request_uri: par.body.request_uri })}`,
  );
  expect(prompt.html).toBeDefined();
  return {
    state,
    verifier,
    requestUri: par.body.request_uri as string,
    browser,
    prompt: { url: prompt.final, html: prompt.html! },
  };
}

describe('flow.failed and flow.expired (D13)', () => {
  const secret = webhookSecret();
  let receiver: Awaited<ReturnType<typeof startWebhookReceiver>>;
  let t: TestService;
  let wallet: DevWallet;
  beforeAll(async () => {
    receiver = await startWebhookReceiver(secret);
    t = await startTestService({ clients: [externalClient(receiver.url, secret)] });
    wallet = await newWallet();
  });
  afterAll(async () => {
    await t?.stop();
    await receiver?.close();
  });

  it('PIN attempts used up: flow.failed with error and error_description, no ContinuationContext; the browser is not sent back', async () => {
    const flow = await startFlow(t.url, 'issuance', { PinCode: '1234' });
    const offer = offerFromPage(flow.prompt.html);
    for (let i = 0; i < 3; i++) await expect(wallet.receive(offer, { pin: '0000' })).rejects.toThrow();
    const hook = await receiver.next((h) => h.payload.data.state === flow.state);
    expect(hook.payload).toMatchObject({
      type: 'flow.failed',
      data: {
        state: flow.state,
        client_id: CLIENT.id,
        flow: 'issuance',
        error: 'access_denied',
        error_description: expect.stringContaining('PIN'),
      },
    });
    expect(hook.payload.data.ContinuationContext).toBeUndefined();
    expect(leaks([hook.raw], [{ what: 'PIN', value: '1234', isolated: true }])).toEqual([]);
    expect(hook.raw).not.toContain('Lovelace');
    const status = JSON.parse((await flow.browser.follow(`${flow.prompt.url}/status`)).html!);
    expect(status).toMatchObject({ status: 'failed', handover: true });
    const page = await flow.browser.follow(`${flow.prompt.url}/continue`);
    expect(page.final).toContain('/interaction/');
    expect(page.html).toContain('has been told');
    // one outcome per flow: nothing else follows
    await new Promise((r) => setTimeout(r, 500));
    expect(receiver.received.filter((h) => h.payload.data.state === flow.state)).toHaveLength(1);
  });

  it('the wallet declines (no matching credential): flow.failed', async () => {
    const flow = await startFlow(t.url, 'verification');
    // an empty wallet sends an Authorization Error Response (access_denied), then reports it
    await expect((await newWallet()).present(requestFromPage(flow.prompt.html))).rejects.toThrow(/no credential/);
    const hook = await receiver.next((h) => h.payload.data.state === flow.state);
    expect(hook.payload).toMatchObject({ type: 'flow.failed', data: { flow: 'verification', error: 'access_denied' } });
  });
});

describe('flow.expired (D13: the prompt timed out)', () => {
  const secret = webhookSecret();
  let receiver: Awaited<ReturnType<typeof startWebhookReceiver>>;
  let t: TestService;
  beforeAll(async () => {
    receiver = await startWebhookReceiver(secret);
    t = await startTestService({ clients: [externalClient(receiver.url, secret)], lifetimes: { offer: 1 } });
  });
  afterAll(async () => {
    await t?.stop();
    await receiver?.close();
  });

  it('a verification nobody answers: flow.expired once its request expired, and a late answer changes nothing', async () => {
    const flow = await startFlow(t.url, 'verification');
    const hook = await receiver.next((h) => h.payload.data.state === flow.state, 20_000);
    expect(hook.payload).toMatchObject({
      type: 'flow.expired',
      data: { state: flow.state, flow: 'verification', error: 'access_denied' },
    });
    expect(hook.payload.data.ContinuationContext).toBeUndefined();
    const late = await (
      await newWallet()
    )
      .present(requestFromPage(flow.prompt.html))
      .catch((err: Error) => ({ status: 0, body: err.message }));
    expect(late.status).not.toBe(200);
    await new Promise((r) => setTimeout(r, 500));
    expect(receiver.received.filter((h) => h.payload.data.state === flow.state)).toHaveLength(1);
  });
});

// These start services on the machine's Redis whatever TEST_STORE says: they run in the flows-redis
// project only (the memory store cannot outlive a process or be shared).
const onRedis = process.env.TEST_STORE === 'redis' ? describe : describe.skip;

onRedis('deliveries survive a restart (D13: kept in the store before the first attempt)', () => {
  it('the receiver is down while the flow completes; the service stops, starts again, and delivers (same webhook-id)', async () => {
    const secret = webhookSecret();
    const receiver = await startWebhookReceiver(secret, (_h, _req, res) => {
      res.statusCode = 503;
      res.end();
    });
    const prefix = `test:ext:${randomBytes(4).toString('hex')}:`;
    const options = { clients: [externalClient(receiver.url, secret)], webhooks: { firstRetry: 1 } };
    const first = await startTestService(options, {
      store: await createRedisStore({ url: REDIS_URL, keyPrefix: prefix }),
    });
    let second: TestService | undefined;
    try {
      const flow = await startFlow(first.url, 'verification');
      // an empty wallet declines: flow.failed
      await expect((await newWallet()).present(requestFromPage(flow.prompt.html))).rejects.toThrow(/no credential/);
      const refused = await receiver.next((h) => h.payload.data.state === flow.state);
      await first.stop();
      const attemptsWhileUp = receiver.received.length;
      receiver.setAnswer(undefined); // 204 from now on
      second = await startTestService(options, {
        store: await createRedisStore({ url: REDIS_URL, keyPrefix: prefix }),
      });
      const delivered = await receiver.next(
        (h) => h.payload.data.state === flow.state && receiver.received.indexOf(h) >= attemptsWhileUp,
        15_000,
      );
      expect(delivered.id).toBe(refused.id);
      expect(delivered.raw).toBe(refused.raw);
      // the receiver has answered; the delivery's record follows
      await expect.poll(async () => (await second!.service.webhooks.get(refused.id))?.state).toBe('delivered');
    } finally {
      await second?.stop();
      await receiver.close();
    }
  });
});

onRedis('three instances on one Redis behind a round-robin proxy (D13, D14)', () => {
  it('every flow is announced once, and continued through any instance', async () => {
    const secret = webhookSecret();
    const receiver = await startWebhookReceiver(secret);
    const farm = await startInstancesBehindProxy({
      count: 3,
      store: { url: REDIS_URL, keyPrefix: `test:ext3:${randomBytes(4).toString('hex')}:` },
      overrides: { clients: [externalClient(receiver.url, secret)] },
    });
    try {
      const wallet = await newWallet();
      const config = await oidc.discovery(
        new URL(`${farm.baseUrl}/v2.0/.well-known/openid-configuration`),
        CLIENT.id,
        CLIENT.secret,
        oidc.ClientSecretPost(CLIENT.secret),
        { execute: [oidc.allowInsecureRequests] },
      );
      const flows = [];
      for (let i = 0; i < 6; i++) {
        const flow = await startFlow(farm.baseUrl, 'issuance');
        await wallet.receive(offerFromPage(flow.prompt.html));
        flows.push(flow);
      }
      for (const flow of flows) {
        const hook = await receiver.next((h) => h.payload.data.state === flow.state);
        expect(hook.payload.type).toBe('flow.completed');
        const res = await fetch(
          `${farm.baseUrl}/v2.0/oidc/authorize?${new URLSearchParams({ client_id: CLIENT.id, context_id: hook.payload.data.ContinuationContext, request_uri: flow.requestUri })}`,
          { redirect: 'manual' },
        );
        expect(res.status).toBe(302);
        const tokens = await oidc.authorizationCodeGrant(config, new URL(res.headers.get('location')!), {
          pkceCodeVerifier: flow.verifier,
          expectedState: flow.state,
          expectedNonce: 'n',
          idTokenExpected: true,
        });
        expect(tokens.claims()).toMatchObject(badge);
      }
      await new Promise((r) => setTimeout(r, 1_500)); // every instance polls at least once more
      // the flows' outcomes (the dev wallet's credential.accepted notifications are events of their own)
      const ids = receiver.received.filter((h) => h.payload.type.startsWith('flow.')).map((h) => h.id);
      expect(ids).toHaveLength(flows.length);
      expect(new Set(ids).size).toBe(flows.length);
    } finally {
      await farm.stop();
      await receiver.close();
    }
  });
});
